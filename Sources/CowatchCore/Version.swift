/// This build's version, as `cowatch --version`, the server's first line and
/// `/metrics` (`cowatch_build_info`) say it: what an operator reports with a
/// defect and compares across a cluster's nodes. Raised with each release.
public enum CowatchVersion {
    public static let current = "0.50.0"
}
