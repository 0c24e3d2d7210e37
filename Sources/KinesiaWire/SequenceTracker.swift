/// What the receiver learns from one message's stream id and sequence number.
public enum SequenceResult: Hashable, Sendable {
    /// The next expected message.
    case inOrder
    /// Newer than expected: `missed` messages before it never arrived (so far). Their sequence
    /// numbers are `sequence - missed ..< sequence`.
    case gap(missed: UInt64)
    /// Already delivered: drop it.
    case duplicate
    /// Arrived late: it had been counted missing and is now delivered (``SequenceTotals/missing``
    /// goes down by one).
    case outOfOrder
    /// Too old to judge: older than the tracker's window, or from before the first message the
    /// tracker saw of this stream. Not delivered, not counted as a duplicate.
    case stale
    /// The first message of a stream on this topic. `restart` is `true` when another stream was
    /// seen on this topic before (the sender restarted: its numbering starts over, which is not
    /// a gap). `missed` counts the messages before this one that never arrived, and is non-zero
    /// only when the tracker ``SequenceTracker/countsMissingStart``.
    case newStream(restart: Bool, missed: UInt64)

    /// Whether the message should be handed on (not a duplicate, not stale).
    public var isDelivered: Bool {
        switch self {
        case .inOrder, .gap, .outOfOrder, .newStream: true
        case .duplicate, .stale: false
        }
    }
}

/// Running counts of a ``SequenceTracker``, for one topic or for all of them.
public struct SequenceTotals: Hashable, Sendable, CustomStringConvertible {
    /// Messages handed on (every result but ``SequenceResult/duplicate`` and
    /// ``SequenceResult/stale``).
    public var delivered: UInt64 = 0
    /// Messages that never arrived: every gap, minus the late ones that came after all.
    public var missing: UInt64 = 0
    /// Messages that arrived twice.
    public var duplicates: UInt64 = 0
    /// Messages that arrived after a later one (counted missing, then delivered).
    public var outOfOrder: UInt64 = 0
    /// Messages too old to judge.
    public var stale: UInt64 = 0
    /// Times a topic changed stream id (a sender restarted, or two senders share a topic).
    public var restarts: UInt64 = 0

    /// Zero counts.
    public init() {}

    /// `"delivered=.. missing=.. duplicates=.. outOfOrder=.. stale=.. restarts=.."`.
    public var description: String {
        "delivered=\(delivered) missing=\(missing) duplicates=\(duplicates) "
            + "outOfOrder=\(outOfOrder) stale=\(stale) restarts=\(restarts)"
    }
}

/// The receiver's view of sequence numbers: per topic (or any key), the current sender stream
/// and which recent sequence numbers arrived.
///
/// ZeroMQ's PUB socket drops silently at its high-water mark; sequence numbers are the only way
/// to see it. Feed every received header to ``record(stream:sequence:on:)`` and act on the
/// result: hand on delivered messages, drop duplicates, request a replay for gaps.
///
/// A window of the last ``window`` sequence numbers per topic tells a duplicate from a late
/// arrival; older messages are ``SequenceResult/stale``. Memory is fixed per topic.
///
/// A new stream id on a topic is a restart, not a gap. Two senders publishing on the same topic
/// show as a restart at every switch: a configuration error made visible in
/// ``SequenceTotals/restarts``.
///
/// ```swift
/// var tracker = SequenceTracker<Topic>()
/// switch tracker.record(stream: header.streamID, sequence: header.sequence, on: topic) {
/// case .duplicate, .stale: break
/// case .gap(let missed): log("lost \(missed)"); handle(message)
/// default: handle(message)
/// }
/// ```
public struct SequenceTracker<Key: Hashable & Sendable>: Sendable {
    /// How many recent sequence numbers are remembered per topic.
    public let window: Int
    /// Whether a stream's first message counts the sequence numbers before it as missing
    /// (senders number every topic from 0). Off by default, because a subscriber that joins
    /// late legitimately starts in the middle of a stream; turn it on when the subscriber was
    /// there before the sender started (tests, replays).
    public let countsMissingStart: Bool

    private var states: [Key: TopicState] = [:]
    /// The totals of every topic.
    public private(set) var totals = SequenceTotals()

    /// Creates a tracker.
    /// - Parameters:
    ///   - window: Recent sequence numbers remembered per topic, rounded up to a multiple of
    ///     64 (at least 64).
    ///   - countsMissingStart: Whether messages before a stream's first received one count as
    ///     missing.
    public init(window: Int = 1024, countsMissingStart: Bool = false) {
        self.window = max(64, (window + 63) / 64 * 64)
        self.countsMissingStart = countsMissingStart
    }

    /// The totals of one topic (zero for a topic never seen).
    public func totals(for key: Key) -> SequenceTotals { states[key]?.totals ?? SequenceTotals() }

    /// The current stream id of a topic, or `nil` for a topic never seen.
    public func stream(for key: Key) -> StreamID? { states[key]?.stream }

    /// The topics seen so far.
    public var keys: [Key] { Array(states.keys) }

    /// Judges one received message.
    /// - Parameters:
    ///   - stream: The sender's stream id (``WireHeader/streamID``).
    ///   - sequence: The message's sequence number (``WireHeader/sequence``).
    ///   - key: The topic.
    /// - Returns: What the message is; the totals are updated.
    @discardableResult
    public mutating func record(stream: StreamID, sequence: UInt64, on key: Key) -> SequenceResult {
        let result: SequenceResult
        // One lookup, in place: reading the state (`states.values[index].stream`) would copy it.
        if let index = states.index(forKey: key),
            let recorded = states.values[index].record(sequence, of: stream)
        {
            result = recorded
        } else {
            let previous = states[key]?.totals
            var state = TopicState(
                stream: stream, window: window, base: countsMissingStart ? 0 : sequence,
                totals: previous ?? SequenceTotals())
            if previous != nil { state.totals.restarts &+= 1 }
            let first = state.record(sequence)
            let missed: UInt64 = if case .gap(let missed) = first { missed } else { 0 }
            states[key] = state
            result = .newStream(restart: previous != nil, missed: missed)
        }
        count(result)
        return result
    }

    /// Judges one received message by its header.
    @discardableResult
    public mutating func record(_ header: WireHeader, on key: Key) -> SequenceResult {
        record(stream: header.streamID, sequence: header.sequence, on: key)
    }

    /// Tells the tracker the last sequence number the sender sent on a topic (from an end of
    /// stream notice, a health report or a replay answer): the messages after the last received
    /// one that never arrived are counted missing.
    /// - Returns: How many messages this newly counts missing (0 when the stream is not the
    ///   topic's current one, or nothing is missing at the end).
    @discardableResult
    public mutating func reconcile(stream: StreamID, through lastSequence: UInt64, on key: Key) -> UInt64 {
        guard let current = states[key]?.stream, current == stream else { return 0 }
        let missed = states[key]!.reconcile(through: lastSequence)
        totals.missing.addSaturating(missed)
        return missed
    }

    private mutating func count(_ result: SequenceResult) {
        switch result {
        case .inOrder: totals.delivered &+= 1
        case .gap(let missed):
            totals.delivered &+= 1
            totals.missing.addSaturating(missed)
        case .duplicate: totals.duplicates &+= 1
        case .outOfOrder:
            totals.delivered &+= 1
            totals.outOfOrder &+= 1
            totals.missing.subtractSaturating(1)
        case .stale: totals.stale &+= 1
        case .newStream(let restart, let missed):
            totals.delivered &+= 1
            totals.missing.addSaturating(missed)
            if restart { totals.restarts &+= 1 }
        }
    }

    /// The state of one topic: its stream, the highest sequence number seen and a ring bitmap
    /// of which of the last `window` sequence numbers arrived.
    struct TopicState: Sendable {
        let stream: StreamID
        /// The lowest sequence number the tracker judges for this stream.
        let base: UInt64
        /// The highest sequence number received, `nil` before the first.
        var highest: UInt64?
        /// Bit `s % window` is set when `s` (within the window below `highest`) arrived.
        var received: [UInt64]
        var totals: SequenceTotals

        /// ``record(_:)`` when `stream` is this state's stream; `nil` (nothing changed) otherwise.
        mutating func record(_ sequence: UInt64, of stream: StreamID) -> SequenceResult? {
            stream == self.stream ? record(sequence) : nil
        }

        init(stream: StreamID, window: Int, base: UInt64, totals: SequenceTotals) {
            self.stream = stream
            self.base = base
            self.received = Array(repeating: 0, count: window / 64)
            self.totals = totals
        }

        private var windowSize: UInt64 { UInt64(received.count * 64) }

        private func isReceived(_ sequence: UInt64) -> Bool {
            let bit = sequence % windowSize
            return received[Int(bit / 64)] & (1 << (bit % 64)) != 0
        }

        private mutating func mark(_ sequence: UInt64, _ value: Bool) {
            let bit = sequence % windowSize
            if value {
                received[Int(bit / 64)] |= 1 << (bit % 64)
            } else {
                received[Int(bit / 64)] &= ~(1 << (bit % 64))
            }
        }

        /// Moves `highest` to `sequence`, clearing the bits of the skipped numbers.
        /// - Returns: How many numbers were skipped.
        private mutating func advance(to sequence: UInt64) -> UInt64 {
            // Total: `highest` is below `sequence` here, so `highest + 1` cannot overflow.
            let firstSkipped = highest.map { $0 + 1 } ?? base
            let skipped = sequence - firstSkipped
            if skipped >= windowSize {
                for index in received.indices { received[index] = 0 }
            } else {
                var skippedSequence = firstSkipped
                while skippedSequence < sequence {
                    mark(skippedSequence, false)
                    skippedSequence += 1
                }
            }
            highest = sequence
            totals.missing.addSaturating(skipped)
            return skipped
        }

        mutating func record(_ sequence: UInt64) -> SequenceResult {
            if sequence < base {
                totals.stale &+= 1
                return .stale
            }
            if let highest, sequence <= highest {
                if highest - sequence >= windowSize {
                    totals.stale &+= 1
                    return .stale
                }
                if isReceived(sequence) {
                    totals.duplicates &+= 1
                    return .duplicate
                }
                mark(sequence, true)
                totals.delivered &+= 1
                totals.outOfOrder &+= 1
                totals.missing.subtractSaturating(1)
                return .outOfOrder
            }
            let skipped = advance(to: sequence)
            mark(sequence, true)
            totals.delivered &+= 1
            return skipped == 0 ? .inOrder : .gap(missed: skipped)
        }

        mutating func reconcile(through lastSequence: UInt64) -> UInt64 {
            if let highest, lastSequence <= highest { return 0 }
            if highest == nil, lastSequence < base { return 0 }
            // Count lastSequence itself as skipped too: advance to it, then unmark it.
            let skipped = advance(to: lastSequence)
            mark(lastSequence, false)
            totals.missing &+= 1
            return skipped &+ 1
        }
    }
}

extension SequenceTracker where Key == Topic {
    /// Judges one received message by its header: the tracker of a subscriber, whose keys are
    /// topics, compiled for them here (a generic call from another module would look up the
    /// tracker's type metadata at run time, on every message).
    @discardableResult
    public mutating func record(_ header: WireHeader, on topic: Topic) -> SequenceResult {
        record(stream: header.streamID, sequence: header.sequence, on: topic)
    }
}
