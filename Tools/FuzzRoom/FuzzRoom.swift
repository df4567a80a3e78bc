import FuzzSupport

/// libFuzzer target for the room core: the bytes decode (`RoomStepDecoder`) into a
/// room's limits and a sequence of steps from several members, run through
/// `RoomDriver`, the gateway simulation that checks the room's invariants after
/// every input. `commands/fuzz room` runs it.
@main
enum FuzzRoom {
    static func main() {
        FuzzMain.run(RoomSession.check)
    }
}
