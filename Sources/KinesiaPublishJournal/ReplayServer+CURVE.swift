public import KinesiaClient

extension ReplayServer {
    /// What the ingest and the worker say when they journal on a TCP bus with CURVE keys whose
    /// port leaves no room for the broker's replay port (`PORT + 3` above 65535): a replay
    /// endpoint of their own would be outside the broker's authentication, so they serve none.
    public static let notServedOnCURVE =
        "replay is not served on this TCP bus with CURVE keys: its port leaves no room for the broker's "
        + "replay port (PORT+3), and a replay endpoint of this process would bypass the broker's "
        + "authentication and encryption. Journals are still written (analyze journal:PATH reads them); "
        + "consumers on this bus report what they miss as lost (docs/threat-model.md)"
}
