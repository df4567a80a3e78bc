import FuzzSupport

/// libFuzzer target for `LineParser`: the bytes are one WebSocket message, decoded
/// and split into lines as the gateway does, and every line's outcome is checked
/// against `ParserProperties`. `commands/fuzz parser` runs it.
@main
enum FuzzParser {
    static func main() {
        FuzzMain.run(ParserProperties.check)
    }
}
