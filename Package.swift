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
    ],
    targets: [
        // The line protocol's vocabulary: typed media time and rates, and the one
        // table of slash commands that drives parsing, /help and docs/commands.md.
        .target(name: "SlashCommands", linkerSettings: libm),
        // Rooms, group sessions and the playback coordinator: pure state machines
        // that take `now` and inputs and return actions. No I/O, no clock.
        .target(name: "CowatchCore", dependencies: ["SlashCommands"], linkerSettings: libm),
        .executableTarget(
            name: "cowatch",
            dependencies: [
                "CowatchCore",
                "SlashCommands",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // `commands/bench`: commands per second through the core alone.
        .executableTarget(name: "CoreBenchmark", dependencies: ["CowatchCore", "SlashCommands"]),
        .testTarget(name: "SlashCommandsTests", dependencies: ["SlashCommands"]),
        .testTarget(name: "CowatchCoreTests", dependencies: ["CowatchCore", "SlashCommands"]),
    ],
    swiftLanguageModes: [.v6]
)
