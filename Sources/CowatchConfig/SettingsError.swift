/// A setting refused, in words: what was expected and, once its source is
/// known, where the value came from (`cowatch.conf:3`, `COWATCH_PORT`, `--port`).
/// The one error of every settings reader (`cowatch serve`'s and `cowatch bridge`'s).
public struct SettingsError: Error, CustomStringConvertible, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
