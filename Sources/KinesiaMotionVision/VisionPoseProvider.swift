// The live camera adapter of the seeds (`live-camera-vision`). It exists only where Apple's
// Vision and AVFoundation do, on iOS only (macOS has both, but the adapter is not meant for it);
// elsewhere this file, and so the module, compiles to nothing.
// Everything that can be tested without a camera (coordinates, sides, confidence cut, empty
// poses) is in KinesiaMotion's `VisionPoseConverter`, tested on Linux; this file only feeds it.
#if os(iOS) && canImport(Vision) && canImport(AVFoundation)
    public import AVFoundation
    public import KinesiaMotion
    import Synchronization
    import Vision

    /// Poses from the device camera, detected by Vision's 2D body-pose request.
    ///
    /// The camera turns on when someone starts iterating ``poses()`` and turns off when they stop:
    ///
    /// ```swift
    /// let camera = VisionPoseProvider(camera: .front, minimumConfidence: 0.3)
    /// if !VisionPoseProvider.isAuthorized {
    ///     guard await VisionPoseProvider.requestAccess() else { return }
    /// }
    /// session.start(with: camera)   // turns the camera on
    /// session.stop()                // turns it off
    /// ```
    ///
    /// What it does inside:
    /// - VGA capture (640x480), enough for the detector and light on the battery;
    /// - late frames are discarded: a slow consumer always gets the newest pose;
    /// - frames are rotated to portrait before detection, and Vision's normalised, bottom-left
    ///   points become pixels of that upright image with y down;
    /// - with the front camera, left and right are swapped so that sides are anatomical; the
    ///   coordinates are those of the unmirrored camera image, so mirror x when drawing over the
    ///   (mirrored) preview;
    /// - an empty pose is sent when nobody is detected.
    ///
    /// One provider serves one stream at a time: calling ``poses()`` again ends the previous stream.
    /// To measure both sides, give each pose to two sessions from one loop. Remember the
    /// `NSCameraUsageDescription` key in Info.plist.
    public final class VisionPoseProvider: PoseProvider, @unchecked Sendable {
        // @unchecked Sendable: `captureSession` and `output` are configured only on `sessionQueue`;
        // the per-frame state lives in `FrameDelegate`, behind a Mutex or on `videoQueue`.

        /// The capture session, for an `AVCaptureVideoPreviewLayer`. Do not start or stop it
        /// yourself: iterating ``poses()`` does.
        public let captureSession = AVCaptureSession()
        /// The camera the provider uses.
        public let camera: CameraPosition
        /// Points under this confidence are dropped.
        public let minimumConfidence: Double

        private let sessionQueue = DispatchQueue(label: "KinesiaMotionVision.session")
        private let videoQueue = DispatchQueue(label: "KinesiaMotionVision.video")
        private let output = AVCaptureVideoDataOutput()
        private let frames: FrameDelegate
        private var isConfigured = false  // sessionQueue only

        /// Creates a provider; the camera stays off until ``poses()`` is iterated.
        /// - Parameters:
        ///   - camera: `.front` (the selfie camera; sides are swapped) or `.back`.
        ///   - minimumConfidence: Points under it are dropped.
        public init(camera: CameraPosition = .front, minimumConfidence: Double = 0.3) {
            self.camera = camera
            self.minimumConfidence = minimumConfidence
            frames = FrameDelegate(
                converter: VisionPoseConverter(camera: camera, minimumConfidence: minimumConfidence))
        }

        /// Whether the user has allowed camera access.
        public static var isAuthorized: Bool {
            AVCaptureDevice.authorizationStatus(for: .video) == .authorized
        }

        /// Asks the user for camera access (once; later calls return the stored answer).
        /// - Returns: Whether access is granted.
        public static func requestAccess() async -> Bool {
            await AVCaptureDevice.requestAccess(for: .video)
        }

        /// The poses of the live camera; a slow consumer always gets the newest pose.
        ///
        /// Calling this to iterate starts the camera; when the consumer stops iterating (or its
        /// task is cancelled) the camera stops. The stream keeps only the newest pose
        /// (`bufferingNewest(1)`): older ones are dropped, never delayed. If the camera cannot be
        /// opened (no permission, no camera) the stream ends at once.
        public func poses() -> AsyncStream<Pose> {
            let (stream, continuation) = AsyncStream.makeStream(
                of: Pose.self, bufferingPolicy: .bufferingNewest(1))
            let generation = frames.attach(continuation)
            continuation.onTermination = { [weak self] _ in
                guard let self, self.frames.detach(generation) else { return }
                self.sessionQueue.async {
                    if self.captureSession.isRunning { self.captureSession.stopRunning() }
                }
            }
            sessionQueue.async { [self] in
                guard frames.isCurrent(generation) else { return }
                guard configureIfNeeded() else {
                    frames.finish(generation)
                    return
                }
                if !captureSession.isRunning { captureSession.startRunning() }
            }
            return stream
        }

        /// Sets up input and output once (on `sessionQueue`); `false` when the camera is unavailable.
        private func configureIfNeeded() -> Bool {
            if isConfigured { return true }
            guard Self.isAuthorized else { return false }
            let position: AVCaptureDevice.Position = camera == .front ? .front : .back
            guard
                let device = AVCaptureDevice.default(
                    .builtInWideAngleCamera, for: .video, position: position),
                let input = try? AVCaptureDeviceInput(device: device)
            else { return false }

            captureSession.beginConfiguration()
            defer { captureSession.commitConfiguration() }
            if captureSession.canSetSessionPreset(.vga640x480) {
                captureSession.sessionPreset = .vga640x480
            }
            guard captureSession.canAddInput(input) else { return false }
            captureSession.addInput(input)

            output.alwaysDiscardsLateVideoFrames = true
            output.videoSettings = [
                kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_420YpCbCr8BiPlanarFullRange
            ]
            output.setSampleBufferDelegate(frames, queue: videoQueue)
            guard captureSession.canAddOutput(output) else {
                captureSession.removeInput(input)
                return false
            }
            captureSession.addOutput(output)

            if let connection = output.connection(with: .video) {
                // Upright portrait buffers, so Vision sees the patient standing and the converter's
                // "upright image" is the buffer itself.
                if connection.isVideoRotationAngleSupported(90) { connection.videoRotationAngle = 90 }
                // Unmirrored frames: the converter swaps sides for the front camera.
                if connection.isVideoMirroringSupported {
                    connection.automaticallyAdjustsVideoMirroring = false
                    connection.isVideoMirrored = false
                }
            }
            isConfigured = true
            return true
        }
    }

    /// Receives camera frames on the video queue, runs Vision and yields poses to the current stream.
    private final class FrameDelegate: NSObject, AVCaptureVideoDataOutputSampleBufferDelegate,
        @unchecked Sendable
    {
        // @unchecked Sendable: `state` is behind a Mutex; `request` is used only on the video queue.
        private struct State {
            var generation = 0
            var continuation: AsyncStream<Pose>.Continuation?
        }

        private let state = Mutex(State())
        private let converter: VisionPoseConverter
        private let request = VNDetectHumanBodyPoseRequest()

        /// Vision's joint names for each ``Joint``.
        private static let jointNames: [(VNHumanBodyPoseObservation.JointName, Joint)] = [
            (.nose, .nose), (.leftEye, .leftEye), (.rightEye, .rightEye), (.leftEar, .leftEar),
            (.rightEar, .rightEar), (.neck, .neck), (.root, .root),
            (.leftShoulder, .leftShoulder), (.rightShoulder, .rightShoulder),
            (.leftElbow, .leftElbow), (.rightElbow, .rightElbow),
            (.leftWrist, .leftWrist), (.rightWrist, .rightWrist),
            (.leftHip, .leftHip), (.rightHip, .rightHip),
            (.leftKnee, .leftKnee), (.rightKnee, .rightKnee),
            (.leftAnkle, .leftAnkle), (.rightAnkle, .rightAnkle),
        ]

        init(converter: VisionPoseConverter) {
            self.converter = converter
        }

        /// Makes `continuation` the current stream, ending the previous one; returns its generation.
        func attach(_ continuation: AsyncStream<Pose>.Continuation) -> Int {
            let (generation, previous) = state.withLock { state in
                let previous = state.continuation
                state.generation += 1
                state.continuation = continuation
                return (state.generation, previous)
            }
            previous?.finish()
            return generation
        }

        /// Forgets the stream of `generation`; `true` when it was the current one (stop the camera).
        func detach(_ generation: Int) -> Bool {
            state.withLock { state in
                guard state.generation == generation, state.continuation != nil else { return false }
                state.continuation = nil
                return true
            }
        }

        /// Whether `generation` is still the current stream.
        func isCurrent(_ generation: Int) -> Bool {
            state.withLock { $0.generation == generation && $0.continuation != nil }
        }

        /// Ends the stream of `generation` (the camera could not start).
        func finish(_ generation: Int) {
            let continuation = state.withLock { state -> AsyncStream<Pose>.Continuation? in
                guard state.generation == generation else { return nil }
                defer { state.continuation = nil }
                return state.continuation
            }
            continuation?.finish()
        }

        func captureOutput(
            _ output: AVCaptureOutput, didOutput sampleBuffer: CMSampleBuffer,
            from connection: AVCaptureConnection
        ) {
            guard let continuation = state.withLock({ $0.continuation }),
                let pixelBuffer = CMSampleBufferGetImageBuffer(sampleBuffer)
            else { return }
            let timestamp = CMSampleBufferGetPresentationTimeStamp(sampleBuffer).seconds
            let imageSize = CGSize(
                width: CVPixelBufferGetWidth(pixelBuffer), height: CVPixelBufferGetHeight(pixelBuffer))
            let handler = VNImageRequestHandler(cvPixelBuffer: pixelBuffer, orientation: .up, options: [:])
            var points: [Joint: VisionPoseConverter.NormalizedPoint]?
            do {
                try handler.perform([request])
                if let observation = Self.largest(request.results ?? []) {
                    let recognized = try observation.recognizedPoints(.all)
                    var found: [Joint: VisionPoseConverter.NormalizedPoint] = [:]
                    for (name, joint) in Self.jointNames {
                        guard let point = recognized[name] else { continue }
                        found[joint] = VisionPoseConverter.NormalizedPoint(
                            x: Double(point.location.x), y: Double(point.location.y),
                            confidence: Double(point.confidence))
                    }
                    points = found
                }
            } catch {
                points = nil  // A frame Vision could not read is a frame where nobody is seen.
            }
            continuation.yield(converter.pose(from: points, imageSize: imageSize, timestamp: timestamp))
        }

        /// The person whose detected points span the largest box (several people may be in view).
        private static func largest(_ observations: [VNHumanBodyPoseObservation])
            -> VNHumanBodyPoseObservation?
        {
            var best: (observation: VNHumanBodyPoseObservation, area: Double)?
            for observation in observations {
                guard let points = try? observation.recognizedPoints(.all) else { continue }
                let visible = points.values.filter { $0.confidence > 0 }.map(\.location)
                guard let first = visible.first else { continue }
                var minX = first.x, maxX = first.x, minY = first.y, maxY = first.y
                for point in visible {
                    minX = min(minX, point.x)
                    maxX = max(maxX, point.x)
                    minY = min(minY, point.y)
                    maxY = max(maxY, point.y)
                }
                let area = Double((maxX - minX) * (maxY - minY))
                if best == nil || area > best!.area { best = (observation, area) }
            }
            return best?.observation
        }
    }
#endif
