import Foundation
import KinesiaTestSupport
import KinesiaWire
import Testing

@testable import KinesiaIngest

/// The Swift side of the camera ingest that needs no detector: sources, options, the
/// detector's command line and its stats lines.
struct CameraSourceTests {
    @Test func videoAndCameraSourcesAreRecognisedAndOthersAreNot() throws {
        #expect(
            try CameraSource(parsing: "video:clinic.mp4") == CameraSource(kind: .video, path: "clinic.mp4"))
        #expect(
            try CameraSource(parsing: "camera:/dev/video0")
                == CameraSource(kind: .camera, path: "/dev/video0"))
        for other in ["data/a.jsonl", "-", "sim:squat", "videos/x.mp4", "cam:/dev/video0"] {
            #expect(try CameraSource(parsing: other) == nil, "\(other)")
        }
        #expect(throws: PoseSourceError.self) { try CameraSource(parsing: "video:") }
    }

    @Test func theDetectorGetsTheOptionsThatApplyToItsSource() {
        var options = CameraOptions(
            mirrored: true, region: FrameRegion(parsing: "0,470,1768,994"),
            size: FrameSize(parsing: "1280x720"),
            fps: 30)
        options.speed = 2
        #expect(
            CameraSource(kind: .camera, path: "/dev/video2").detectorArguments(options) == [
                "--source", "camera:/dev/video2", "--fps", "30.0", "--size", "1280x720", "--speed", "2.0",
                "--mirrored", "--roi", "0,470,1768,994",
            ])
        // A file is read frame after frame at its own timestamps: no rate, size or speed.
        #expect(
            CameraSource(kind: .video, path: "a.mp4").detectorArguments(options) == [
                "--source", "video:a.mp4", "--mirrored", "--roi", "0,470,1768,994",
            ])
        #expect(
            CameraSource(kind: .video, path: "a.mp4").detectorArguments(CameraOptions()) == [
                "--source", "video:a.mp4",
            ])
    }

    @Test func regionsAndSizesAreChecked() {
        #expect(FrameRegion(parsing: "0,470,1768,994")?.description == "0,470,1768,994")
        for bad in ["0,470,1768", "1,2,3,4,5", "10,0,5,20", "-1,0,5,5", "0,0,0,0", "a,b,c,d", ""] {
            #expect(FrameRegion(parsing: bad) == nil, "\(bad)")
        }
        #expect(FrameSize(parsing: "1280x720")?.description == "1280x720")
        #expect(FrameSize(parsing: "1280X720")?.width == 1280)
        for bad in ["1280", "0x720", "x720", "1280x-1", "axb"] {
            #expect(FrameSize(parsing: bad) == nil, "\(bad)")
        }
    }

    @Test func statsLinesBecomeHealthCountersAndASummary() {
        var stats = DetectorStats()
        #expect(stats.healthCounters.isEmpty && stats.summary == nil)
        stats.update(fromLine: "stats {broken")
        #expect(stats.healthCounters.isEmpty)
        stats.update(
            fromLine: """
                stats {"decodeMs":0.9,"decodeSeconds":0.1,"detectorMs":30.4,"detectorSeconds":3.0,"final":true,\
                "fpsIn":30.2,"fpsOut":9.6,"framesDropped":68,"framesIn":101,"framesOut":33,"otherMs":0.5,\
                "otherSeconds":0.05,"wallSeconds":3.3}
                """)
        #expect(
            stats.healthCounters == [
                "framesIn": 101, "framesAnalysed": 33, "framesDropped": 68, "fpsIn": 30, "fpsOut": 10,
                "detectorMs": 30,
            ])
        #expect(
            stats.summary
                == "detector: 33 frames in 3.3 s (10.0 fps), per frame 90.9 ms detecting, 3.0 ms decoding, "
                + "1.5 ms converting, 9.1 ms outside the detector in all; 68 frames dropped")
    }
}
