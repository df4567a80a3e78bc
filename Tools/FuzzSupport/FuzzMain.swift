#if COWATCH_FUZZING
import CFuzzerDriver
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The entry point every fuzz target shares, so that a target is only its check.
///
/// Built by `commands/fuzz` (with `-sanitize=fuzzer,address` and
/// `-DCOWATCH_FUZZING`), `run` hands the process to libFuzzer, which parses its own
/// flags and calls the check with every input it generates. In an ordinary build,
/// where libFuzzer is not linked, the same executable replays the files and folders
/// named on its command line through the check: a crash artifact or a corpus can be
/// rerun in a debug build, under a debugger, without the fuzzer.
///
/// A check signals a finding by trapping (`fatalError`, `precondition`): libFuzzer
/// then saves the input that caused it as a crash artifact.
public enum FuzzMain {
    /// Checks one input; the bytes are only valid during the call.
    public typealias Check = (UnsafeRawBufferPointer) -> Void

    /// Set once, before the fuzzer starts, and only read afterwards (libFuzzer calls
    /// back on the thread that called `run`).
    nonisolated(unsafe) private static var check: Check = { _ in }

    public static func run(_ check: @escaping Check) -> Never {
        Self.check = check
        #if COWATCH_FUZZING
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in
            FuzzMain.check(UnsafeRawBufferPointer(start: data, count: size))
            // Zero: keep the input if it found new coverage (-1 would reject it).
            return 0
        })
        #else
        exit(replay(CommandLine.arguments.dropFirst()))
        #endif
    }

    /// Runs every file named, and every file in every folder named; 0 when all
    /// were read (a finding traps before this returns).
    static func replay(_ paths: ArraySlice<String>) -> Int32 {
        guard !paths.isEmpty else {
            let name = CommandLine.arguments.first ?? "fuzz target"
            print("usage: \(name) FILE|FOLDER...   (replays inputs; commands/fuzz builds the fuzzer itself)")
            return 2
        }
        var count = 0
        var status: Int32 = 0
        for path in paths {
            let files = InputFiles.list(path)
            if files.isEmpty {
                print("replay: nothing to read at \(path)")
                status = 1
            }
            for file in files {
                guard let bytes = InputFiles.read(file) else {
                    print("replay: cannot read \(file)")
                    status = 1
                    continue
                }
                bytes.withUnsafeBytes { check($0) }
                count += 1
            }
        }
        print("replay: \(count) input(s) checked, no finding")
        return status
    }
}
