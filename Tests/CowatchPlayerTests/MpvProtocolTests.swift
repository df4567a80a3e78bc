import CowatchPlayer
import Testing

@Suite("mpv's JSON IPC lines")
struct MpvProtocolTests {
    @Test("a property change says which property and its value, a flag as a flag and a number as a number")
    func propertyChange() {
        #expect(MpvMessage(line: #"{"event":"property-change","id":1,"name":"pause","data":true}"#)
            == .propertyChange(name: "pause", data: .bool(true)))
        #expect(MpvMessage(line: #"{"event":"property-change","id":2,"name":"duration","data":60.5}"#)
            == .propertyChange(name: "duration", data: .number(60.5)))
        #expect(MpvMessage(line: #"{"event":"property-change","id":2,"name":"speed","data":1}"#)
            == .propertyChange(name: "speed", data: .number(1)))
        #expect(MpvMessage(line: #"{"event":"property-change","id":3,"name":"duration"}"#)
            == .propertyChange(name: "duration", data: .null))
    }

    @Test("an answer carries its request id and whether it succeeded")
    func reply() {
        #expect(MpvMessage(line: #"{"data":10.033333,"request_id":9,"error":"success"}"#)
            == .reply(id: 9, success: true, error: "success", data: .number(10.033333)))
        #expect(MpvMessage(line: #"{"request_id":4,"error":"property unavailable"}"#)
            == .reply(id: 4, success: false, error: "property unavailable", data: .null))
    }

    @Test("events are named, end-file with its reason")
    func events() {
        #expect(MpvMessage(line: #"{"event":"seek"}"#) == .event("seek", reason: nil))
        #expect(MpvMessage(line: #"{"event":"end-file","reason":"eof","playlist_entry_id":1}"#) == .event("end-file", reason: "eof"))
        #expect(MpvMessage(line: "not json") == nil)
    }

    @Test("a command is one line of JSON with its request id")
    func command() {
        let line = MpvMessage.command([.string("seek"), .number(12.5), .string("absolute+exact")], id: 7)
        #expect(line.hasSuffix("\n"))
        #expect(line.filter { $0 == "\n" }.count == 1)
        #expect(line.contains(#""request_id":7"#))
        #expect(line.contains(#"["seek",12.5,"absolute+exact"]"#))
    }
}
