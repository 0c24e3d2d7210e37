import CEspeakNG
import Synchronization

/// The libespeak-ng engine, owned: turns text into 16-bit mono samples in the calling thread
/// (`AUDIO_OUTPUT_SYNCHRONOUS`: no audio device, no thread of the library's own).
///
/// libespeak-ng keeps one engine per process (global state), so at most one synthesizer exists
/// at a time: a second one throws ``SpeechError/engineInUse``; ``close()`` (or the end of the
/// value) lets another one start. The engine itself is initialised once per process and never
/// terminated: libespeak-ng 1.51 hangs in `espeak_Initialize` after `espeak_Terminate`. Not
/// `Sendable`: use it from one thread.
///
/// The output is what the `espeak-ng` command writes with `-w` for the same text and voice,
/// sample for sample (same defaults, same flags: UTF-8 or 8-bit text, a sentence pause at the
/// end), so a ``WAVAudio`` of it is byte-for-byte the command's file.
///
/// ```swift
/// let speech = try SpeechSynthesizer(voice: "pt-br")
/// let audio = try speech.synthesize("Estique o cotovelo")
/// try audio.encoded().write(to: URL(fileURLWithPath: "/tmp/cue.wav"))
/// ```
public final class SpeechSynthesizer {
    /// Whether a synthesizer is open in this process.
    private static let engineInUse = Atomic<Bool>(false)
    /// The sample rate of the process's engine, once initialised (0: not yet).
    private static let initialisedRate = Atomic<Int>(0)

    /// The samples per second of the output (22,050 with espeak-ng's voices).
    public let sampleRate: Int
    /// The voice in use (`en-us`, `pt-br`, `es`).
    public private(set) var voice: String
    private var isOpen = true

    /// Initialises the engine and selects `voice`.
    /// - Parameters:
    ///   - voice: An espeak-ng voice name (`espeak-ng --voices` lists them).
    ///   - dataPath: espeak-ng's data directory (`nil`: the library's default).
    /// - Throws: ``SpeechError``: ``SpeechError/engineInUse``, ``SpeechError/initialisationFailed``
    ///   (no data), ``SpeechError/unknownVoice(_:)``.
    public init(voice: String, dataPath: String? = nil) throws(SpeechError) {
        guard
            Self.engineInUse.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing)
                .exchanged
        else { throw SpeechError.engineInUse }
        var rate = Int32(Self.initialisedRate.load(ordering: .acquiring))
        if rate == 0 {
            if let dataPath {
                rate = dataPath.withCString {
                    espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, $0, Int32(espeakINITIALIZE_DONT_EXIT))
                }
            } else {
                rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, nil, Int32(espeakINITIALIZE_DONT_EXIT))
            }
            if rate > 0 { Self.initialisedRate.store(Int(rate), ordering: .releasing) }
        }
        guard rate > 0 else {
            Self.engineInUse.store(false, ordering: .releasing)
            throw SpeechError.initialisationFailed
        }
        sampleRate = Int(rate)
        self.voice = voice
        espeak_SetSynthCallback(speechSampleCallback)
        do {
            try select(voice: voice)
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
    }

    /// Closes the synthesizer (idempotent); another one may start after, on the same engine.
    public func close() {
        guard isOpen else { return }
        isOpen = false
        Self.engineInUse.store(false, ordering: .releasing)
    }

    /// Selects another voice.
    /// - Throws: ``SpeechError/unknownVoice(_:)``, ``SpeechError/closed``.
    public func select(voice name: String) throws(SpeechError) {
        guard isOpen else { throw SpeechError.closed }
        let status = name.withCString { espeak_SetVoiceByName($0) }
        guard status == EE_OK else { throw SpeechError.unknownVoice(name) }
        voice = name
    }

    /// Speaks `text` into samples.
    /// - Parameter firstSamples: Called once, when the first samples are ready (the moment audio
    ///   could start playing; benchmarks measure it).
    /// - Returns: The audio, at ``sampleRate``.
    /// - Throws: ``SpeechError/synthesisFailed(_:)``, ``SpeechError/closed``.
    public func synthesize(_ text: String, firstSamples: () -> Void = {}) throws(SpeechError) -> WAVAudio {
        guard isOpen else { throw SpeechError.closed }
        let sink = SampleSink()
        let status: espeak_ERROR = withoutActuallyEscaping(firstSamples) { notify in
            sink.firstSamples = notify
            defer { sink.firstSamples = nil }
            let user = Unmanaged.passUnretained(sink).toOpaque()
            var bytes = Array(text.utf8CString)
            let count = bytes.count
            return bytes.withUnsafeMutableBytes { buffer in
                espeak_Synth(
                    buffer.baseAddress, count, 0, POS_CHARACTER, 0, UInt32(espeakCHARS_AUTO | espeakENDPAUSE),
                    nil,
                    user)
            }
        }
        guard status == EE_OK else { throw SpeechError.synthesisFailed(Int(status.rawValue)) }
        return WAVAudio(samples: sink.samples, sampleRate: sampleRate)
    }
}

/// Where the callback puts the samples of one `espeak_Synth` call (passed as its user data).
private final class SampleSink {
    var samples: [Int16] = []
    var firstSamples: (() -> Void)?
}

/// libespeak-ng's synthesis callback: appends the samples to the call's ``SampleSink``.
private let speechSampleCallback:
    @convention(c) (UnsafeMutablePointer<Int16>?, Int32, UnsafeMutablePointer<espeak_EVENT>?)
        -> Int32 = { wav, count, events in
            guard let user = events?.pointee.user_data else { return 0 }
            let sink = Unmanaged<SampleSink>.fromOpaque(user).takeUnretainedValue()
            if let wav, count > 0 {
                if sink.samples.isEmpty, let notify = sink.firstSamples {
                    sink.firstSamples = nil
                    notify()
                }
                sink.samples.append(contentsOf: UnsafeBufferPointer(start: wav, count: Int(count)))
            }
            return 0  // go on
        }

/// Why speech failed.
public enum SpeechError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Another ``SpeechSynthesizer`` is open in this process (libespeak-ng has one engine).
    case engineInUse
    /// libespeak-ng did not start: its data directory is missing (install `espeak-ng-data`).
    case initialisationFailed
    /// No espeak-ng voice has this name.
    case unknownVoice(String)
    /// `espeak_Synth` failed with this `espeak_ERROR`.
    case synthesisFailed(Int)
    /// The synthesizer was closed.
    case closed
    /// The `espeak-ng` command is not on `PATH`.
    case commandMissing

    /// A sentence for people.
    public var description: String {
        switch self {
        case .engineInUse: "another speech synthesizer is open in this process (libespeak-ng has one engine)"
        case .initialisationFailed:
            "libespeak-ng did not start: its data is missing (install espeak-ng-data, see scripts/setup)"
        case .unknownVoice(let name): "espeak-ng has no voice \"\(name)\" (espeak-ng --voices lists them)"
        case .synthesisFailed(let code): "espeak-ng could not synthesize the text (espeak_ERROR \(code))"
        case .closed: "the speech synthesizer is closed"
        case .commandMissing: "the espeak-ng command is not on PATH (install espeak-ng, see scripts/setup)"
        }
    }
}
