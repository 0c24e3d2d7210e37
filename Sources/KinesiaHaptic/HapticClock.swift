import CKinesiaEvdev
import KinesiaSystem

/// Host-side timing of patterns.
public enum HapticClock {
    /// Sleeps `milliseconds` on the calling thread.
    public static func sleep(milliseconds: Int) {
        ThreadSleep.sleep(.milliseconds(milliseconds))
    }
}
