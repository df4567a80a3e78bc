import SlashCommands

/// The `rate-limited` error a connection gets once per episode of lines over its
/// rate (`commands-per-second`): the limit in numbers, and that lines are lost.
enum RateLimitWarning {
    static func error(commandsPerSecond: Double) -> CommandError {
        let rate = NumberText.decimal(commandsPerSecond, places: 1)
        return CommandError(.rateLimited, command: nil,
                            message: "slow down: at most \(rate) commands per second; lines are being dropped")
    }
}
