// swift-tools-version:6.0
import PackageDescription

/// Rounding in the pure modules needs libm, which nothing else links when a
/// target imports neither Foundation nor Glibc.
let libm: [LinkerSetting] = [.linkedLibrary("m", .when(platforms: [.linux]))]

let package = Package(
    name: "Cowatch",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "cowatch", targets: ["cowatch"]),
        .library(name: "CowatchCore", targets: ["CowatchCore"]),
        .library(name: "SlashCommands", targets: ["SlashCommands"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
    ],
    targets: [
        // ICU (Debian libicu-dev): Unicode's security mechanisms (UTS #39) and NFKC,
        // so that names cannot pass for someone else's. C of our own around it,
        // whose header names no ICU type: Foundation's own ICU defines the same
        // types differently, and a module that saw both would not build.
        .target(
            name: "CICU", path: "Shims/CICU",
            linkerSettings: [.linkedLibrary("icui18n"), .linkedLibrary("icuuc"), .linkedLibrary("icudata")]
        ),
        // The line protocol's vocabulary: typed media time and rates, and the one
        // table of slash commands that drives parsing, /help and docs/commands.md.
        .target(name: "SlashCommands", dependencies: ["CICU"], linkerSettings: libm),
        // Time as types (server instants and intervals in milliseconds, whole or
        // with fractions, monotonic instants and durations in microseconds) and
        // the one place the system's clocks are read (`SystemClock`).
        .target(name: "CowatchTime"),
        // Rooms, group sessions and the playback coordinator: pure state machines
        // that take `now` and inputs and return actions. No I/O, no clock.
        // swift-crypto (BoringSSL underneath) for the digests, keyed derivations
        // and password hashing of the secrets rooms keep.
        .target(
            name: "CowatchCore",
            dependencies: [
                "CowatchTime",
                "SlashCommands",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            linkerSettings: libm
        ),
        // The gateway simulation and the invariants every room keeps, checked after
        // every input: shared by the randomized tests and the room fuzzer.
        .target(name: "CowatchCoreChecks", dependencies: ["CowatchTime", "CowatchCore", "SlashCommands"], path: "Tools/CowatchCoreChecks"),
        // libwebsockets (Debian libwebsockets-dev), with a small shim for what
        // does not import. Only files named LWS* in the modules below touch it.
        .systemLibrary(
            name: "CLibWebSockets", path: "Shims/CLibWebSockets",
            pkgConfig: "libwebsockets",
            providers: [.apt(["libwebsockets-dev"])]
        ),
        // The frame headers of the bytes libwebsockets reads for the server's
        // members, so that an unmasked client frame is seen (RFC 6455, 5.1): C,
        // since it defines the recv(2) that the library calls.
        .target(name: "CFrameGuard", path: "Shims/CFrameGuard"),
        // A WebSocket connection's life as a value: receiving and UTF-8, command
        // rate, outbox, closing, pings. Events and `now` in, actions out; no I/O.
        .target(
            name: "CowatchConnection",
            dependencies: ["CowatchTime", .product(name: "DequeModule", package: "swift-collections")]
        ),
        // The server: one libwebsockets context on its own service thread that
        // runs rooms, HTTP routes, limits and metrics.
        .target(
            name: "CowatchGateway",
            dependencies: [
                "CowatchTime",
                "CowatchConfig",
                "CowatchConnection",
                "CowatchCore",
                "CowatchStore",
                "CowatchClient",
                "CowatchWeb",
                "SlashCommands",
                "CLibWebSockets",
                "CFrameGuard",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
                // HMAC-SHA1 for TURN's short-lived credentials (voice tickets).
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The browser client: plain HTML, CSS and JavaScript modules in `Web/`,
        // served as they are (no build step), and `WebRoot`, which finds them next
        // to the installed binary for the gateway to serve.
        .target(name: "CowatchWeb", resources: [.copy("Web")]),
        // The system SQLite (Debian libsqlite3-dev) behind a thin target.
        .systemLibrary(
            name: "CSQLite", path: "Shims/CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // PostgreSQL's client library (Debian libpq-dev) behind a thin target: the
        // store and the cluster's leases, on threads of their own.
        .systemLibrary(
            name: "CLibPQ", path: "Shims/CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        // Where rooms outlive a restart: the store interface, an in-memory store and
        // the embedded SQLite store, writing on a thread of its own.
        .target(
            name: "CowatchStore",
            dependencies: [
                "CowatchTime",
                "CowatchCore",
                "SlashCommands",
                "CSQLite",
                "CLibPQ",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The settings engine of `cowatch serve` and `cowatch bridge`: the config
        // file's format, the sources' order, values checked in the same words.
        .target(name: "CowatchConfig"),
        // `cowatch serve`'s settings: flags, COWATCH_* environment and config file.
        .target(name: "CowatchSettings", dependencies: ["CowatchTime", "CowatchConfig", "CowatchGateway", "CowatchSyncplay", "CowatchCore", "SlashCommands"]),
        // WebSocket clients on the libwebsockets client role, and a client's life
        // (reconnecting, backing off): `cowatch connect`, `watch` and `bridge`,
        // the cluster's relays between nodes, and the integration tests.
        .target(
            name: "CowatchClient",
            dependencies: [
                "CLibWebSockets",
                "COpenSSL",
                "CowatchTime",
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        // `cowatch bench`'s load generator: members over the client transport, a
        // schedule on the monotonic clock, latencies per group. Apart from
        // `CowatchClient` so that the server does not link it.
        .target(name: "CowatchLoad", dependencies: ["CowatchClient", "CowatchCore", "CowatchTime"], path: "Tools/CowatchLoad"),
        // OpenSSL (Debian libssl-dev, which libwebsockets-dev brings): the trust
        // every client's wss:// connection verifies its server with, and the
        // bridge's TLS connections to IRC servers (ircs://).
        .systemLibrary(
            name: "COpenSSL", path: "Shims/COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        // `cowatch bridge`: a channel of a chat network and a room joined
        // together. Pure values (the IRC protocol, the IRC session, the relay of
        // one channel-room pair, the pacer) and the thin glue that carries out
        // what they decide (a TCP/TLS IRC connection on a thread, the room side
        // on WebSocketClients).
        .target(
            name: "CowatchBridge",
            dependencies: [
                "CowatchTime",
                "CowatchConfig",
                "CowatchClient",
                "CowatchCore",
                "SlashCommands",
                "COpenSSL",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        // Syncplay's protocol on `cowatch serve`'s own port: each client a pure
        // session (its lines and its member's events in, what each side is told
        // out), the sockets (TCP, Syncplay's TLS upgrade) on a thread, the members
        // on WebSocketClients.
        .target(
            name: "CowatchSyncplay",
            dependencies: [
                "CowatchTime",
                "CowatchClient",
                "CowatchCore",
                "SlashCommands",
                "COpenSSL",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // `cowatch watch`: mpv as a member of a room. The rules as pure values
        // (what to do now, from the room's state and mpv's readings); the
        // interpreter touching mpv's IPC socket is in the executable.
        .target(name: "CowatchPlayer", dependencies: ["CowatchTime", "CowatchCore", "SlashCommands"]),
        .executableTarget(
            name: "cowatch",
            dependencies: [
                "CowatchTime",
                "CowatchPlayer",
                "CowatchCore",
                "CowatchGateway",
                "CowatchBridge",
                "CowatchSyncplay",
                "CowatchClient",
                "CowatchLoad",
                "CowatchConfig",
                "CowatchSettings",
                "CowatchStore",
                "SlashCommands",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // `commands/bench`: commands per second through the core alone.
        .executableTarget(name: "CoreBenchmark", dependencies: ["CowatchTime", "CowatchCore", "SlashCommands"], path: "Tools/CoreBenchmark"),
        // `commands/bench floor`: the cost of one send() of a small message over loopback TCP.
        .systemLibrary(name: "CEpoll", path: "Shims/CEpoll"),
        .executableTarget(name: "SendFloor", dependencies: ["CEpoll"], path: "Tools/SendFloor"),
        // Fuzz targets, one folder each. `commands/fuzz` builds them with libFuzzer and
        // the address sanitizer (-sanitize=fuzzer,address -DCOWATCH_FUZZING); an
        // ordinary build makes replay tools that run saved inputs through the same checks.
        .systemLibrary(name: "CFuzzerDriver", path: "Tools/CFuzzerDriver"),
        .target(name: "FuzzSupport", dependencies: ["CFuzzerDriver"], path: "Tools/FuzzSupport"),
        .executableTarget(name: "FuzzParser", dependencies: ["FuzzSupport", "SlashCommands"], path: "Tools/FuzzParser"),
        .executableTarget(
            name: "FuzzRoom",
            dependencies: ["CowatchTime", "FuzzSupport", "CowatchCoreChecks", "CowatchCore", "SlashCommands"],
            path: "Tools/FuzzRoom"
        ),
        .executableTarget(name: "FuzzConnection", dependencies: ["CowatchTime", "FuzzSupport", "CowatchConnection"], path: "Tools/FuzzConnection"),
        .testTarget(name: "SlashCommandsTests", dependencies: ["SlashCommands"]),
        .testTarget(name: "CowatchTimeTests", dependencies: ["CowatchTime"]),
        .testTarget(name: "CowatchCoreTests", dependencies: ["CowatchTime", "CowatchCore", "CowatchCoreChecks", "SlashCommands"]),
        .testTarget(name: "CowatchConnectionTests", dependencies: ["CowatchTime", "CowatchConnection"]),
        .testTarget(name: "CowatchPlayerTests", dependencies: ["CowatchPlayer", "CowatchCore", "CowatchTime", "SlashCommands"]),
        .testTarget(name: "CowatchLoadTests", dependencies: ["CowatchLoad", "CowatchClient"]),
        .testTarget(name: "CowatchClientTests", dependencies: ["CowatchTime", "CowatchClient", "CowatchCore", "SlashCommands"]),
        .testTarget(name: "CowatchBridgeTests", dependencies: ["CowatchTime", "CowatchBridge", "CowatchConfig", "CowatchClient", "CowatchCore", "SlashCommands"]),
        .testTarget(name: "CowatchStoreTests", dependencies: ["CowatchTime", "CowatchStore", "CowatchCore", "SlashCommands"]),
        .testTarget(name: "CowatchConfigTests", dependencies: ["CowatchConfig"]),
        .testTarget(name: "CowatchSyncplayTests", dependencies: ["CowatchSyncplay", "CowatchCore", "CowatchTime", "SlashCommands"]),
        .testTarget(name: "CowatchSettingsTests", dependencies: ["CowatchSettings", "CowatchConfig", "CowatchGateway"]),
        // The command line of `cowatch serve` and `cowatch bridge` held to their
        // settings' declarations, with the example config files and docs/settings.md.
        .testTarget(name: "CowatchCommandLineTests", dependencies: [
            "cowatch", "CowatchSettings", "CowatchBridge", "CowatchConfig",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .testTarget(
            name: "CowatchGatewayTests",
            dependencies: ["CowatchTime", "CowatchGateway", "CowatchClient", "CowatchCore", "CowatchStore", "SlashCommands", "CFrameGuard"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
