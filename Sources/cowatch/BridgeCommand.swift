import ArgumentParser
import CowatchBridge
import CowatchConfig
import CowatchCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Logging

/// `cowatch bridge`: a bot that joins IRC channels and Matrix rooms to Cowatch
/// rooms (Sources/CowatchBridge: `RoomRelay` decides for each channel-room pair,
/// `IRCSession` for each IRC connection, `MatrixSession` for each homeserver
/// connection; `BridgeRunner`, `IRCNetwork` and `MatrixNetwork` carry out what
/// they decide).
struct BridgeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bridge",
        abstract: "Join an IRC channel or a Matrix room and a Cowatch room together.",
        discussion: """
        Example: cowatch bridge irc://irc.example.net/#movies --room movies --server ws://127.0.0.1:7480
                 (in the channel, !watch URL, !play, !seek 1:23 ... act on the room; chat goes both ways)
        Matrix:  cowatch bridge --matrix '#movies:example.org' --homeserver https://matrix.example.org
                 --matrix-user @cowatch:example.org --matrix-token TOKEN --room movies (commands: /watch or !watch)
        Several: cowatch bridge --config /etc/cowatch/bridge.conf (one [pair] section per channel and room;
                 deploy/bridge.conf.example shows every setting)
        Each option is also a config-file key (without the dashes) and a COWATCH_BRIDGE_ variable.

        SETTINGS:
        """ + "\n" + options.help(defaults: BridgeSettings.defaults)
    )

    /// Every option is a setting's declaration (`BridgeSettings.declarations`), save
    /// `--config`, which names the file; a bare argument is the IRC channel.
    static let options = SettingOptions(
        keys: BridgeSettings.declarations,
        own: [("config", "FILE", "A config file: settings for every pair, then one [pair] section per channel and room.")],
        positional: "irc")

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("An IRC channel's address, then settings as --KEY VALUE: every one is listed below.",
                                                                  valueName: "settings"))
    var arguments: [String] = []

    /// The settings given on the command line, by key; `--config` names the
    /// file that `run` reads, no setting.
    var flags: [String: String] { ((try? Self.options.parse(arguments)) ?? [:]).filter { $0.key != "config" } }

    /// `--config`, the file of settings and pairs.
    var config: String? { (try? Self.options.parse(arguments))?["config"] }

    func validate() throws {
        _ = try Self.options.parse(arguments)
    }

    func run() throws {
        // What it writes holds secrets (resume tokens in the store and its WAL,
        // access tokens in the bridge's state): readable by its own user only,
        // however it is started (the systemd units say UMask=0077 too).
        umask(0o077)
        let settings: BridgeSettings
        do {
            let environment = ProcessInfo.processInfo.environment
            var file: (path: String, text: String)?
            if let path = config ?? environment["COWATCH_BRIDGE_CONFIG"] {
                guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
                    Output.error("cowatch bridge: cannot read the config file \(path)")
                    throw ExitCode.validationFailure
                }
                file = (path, text)
            }
            settings = try BridgeSettings.resolve(file: file, environment: environment, flags: flags)
        } catch let error as SettingsError {
            Output.error("cowatch bridge: \(error)")
            throw ExitCode.validationFailure
        }
        let level = Logger.Level(rawValue: settings.logLevel) ?? .info
        LoggingSystem.bootstrap { LogfmtHandler(label: $0, level: level) }
        // A write to a socket the other side closed must be an error, not the end of the process.
        signal(SIGPIPE, SIG_IGN)

        let plan = BridgePlan(settings)
        let runner: BridgeRunner
        do {
            runner = try BridgeRunner(pairs: plan.pairs, networks: plan.networks, connectTimeout: plan.connectTimeout,
                                      trust: plan.trust, logger: Logger(label: "cowatch.bridge"))
        } catch {
            Output.error("cowatch bridge: \(error)")
            throw ExitCode.failure
        }
        let done = DispatchSemaphore(value: 0)
        let logger = Logger(label: "cowatch.bridge")
        let signals = SignalWatcher { signal in
            logger.info("signal received, stopping", metadata: ["signal": "\(signal)"])
            runner.stop()
            done.signal()
        }
        runner.start()
        // On standard output whatever the log level, in the log's own form.
        for pair in settings.matrixPairs {
            Output.line(LogfmtHandler.line(level: "notice", label: "cowatch.bridge", message: "bridging", metadata: [
                "matrix_room": "\(pair.matrixRoom)", "homeserver": "\(pair.connection.homeserver)", "room": "\(pair.room)",
                "link": "\(pair.relay.link)", "version": "\(CowatchVersion.current)", "stop": "Ctrl-C or SIGTERM"]))
        }
        for pair in settings.pairs {
            Output.line(LogfmtHandler.line(level: "notice", label: "cowatch.bridge", message: "bridging", metadata: [
                "channel": "\(pair.irc.channel)", "network": "\(pair.irc.tls ? "ircs" : "irc")://\(pair.irc.host):\(pair.irc.port)",
                "room": "\(pair.room)", "link": "\(pair.relay.link)", "version": "\(CowatchVersion.current)",
                "stop": "Ctrl-C or SIGTERM"]))
        }
        done.wait()
        withExtendedLifetime(signals) {}
    }
}
