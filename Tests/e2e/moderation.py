"""Ownership and moderation on a room of their own: the owner link, a host's
mute, kick and ban buttons, and the kicked browser refused under another name;
and the screenshot of the host's member list."""

import json
import re
import time
import urllib.parse

from page_js import CLOSED_JS, LOG_JS, MEMBERS_JS
from report import log


class Moderation:
    """For a RoomRun whose windows A and B are free after the walk."""

    def moderation(self):
        """The owner link, the host's mute, kick and ban buttons, a mute, a kick
        with a reason, and the kicked browser refused when it comes back under
        another name: windows A (the creator) and B, moved to a room of their own
        once the measurements are done."""
        room = "mod-e2e"
        a, b, room_url = self.room_of_their_own(room, "moderation")
        started = time.monotonic()

        a.open(f"{room_url}?name=alice")
        notice = self.wait_js(a, """const box = document.querySelector('#secrets .secret.owner input');
                                    return box ? box.value : null;""",
                              10, "the owner link's box beside the creator's chat")
        key = a.js(f"return localStorage.getItem('cowatch.owner.{room}')")
        match = re.search(r"(\S+)/rooms/" + re.escape(room) + r"\?owner=(\S+)", notice)
        self.check(key and match and match.group(1) == self.server.url("")
                   and urllib.parse.unquote(match.group(2)) == key,
                   f"the creator's page shows its owner link, with the key it keeps: {notice!r}")

        b.open(f"{room_url}?name=bob")
        host_view = self.wait_js(a, MEMBERS_JS + "return rows.length === 2 && rows;", 10,
                                 "bob in alice's member list")
        bob = next((row for row in host_view if row["name"] == "bob"), None)
        self.check(bob and bob["buttons"] == ["mute", "kick", "ban"],
                   f"the host sees mute, kick and ban beside the other member: {host_view}")
        alice = next((row for row in host_view if row["name"] == "alice"), None)
        self.check(alice and "owner" in alice["tags"] and not alice["buttons"],
                   f"the host is marked owner, with no buttons beside itself: {alice}")
        member_view = self.wait_js(b, MEMBERS_JS + "return rows.length === 2 && rows;", 10,
                                   "both members in bob's member list")
        self.check(not any(row["buttons"] for row in member_view),
                   f"a member who is not a host sees no moderation buttons: {member_view}")

        # Something on the screen for the screenshot.
        a.type(f"/watch {self.media.url('timecode.mp4')} Test pattern, part 1")
        b.type("hello from the second window")

        moderate = "//ul[@id='members']/li[span[@class='name' and text()='bob']]//button[text()='{}']"
        self.click(a, moderate.format("mute"), "bob's mute button")
        host_view = self.wait_js(a, MEMBERS_JS + """const bob = rows.find((r) => r.name === 'bob');
                                                    return bob && bob.tags.includes('muted') && rows;""",
                                 5, "the muted tag beside bob in alice's list")
        bob = next(row for row in host_view if row["name"] == "bob")
        self.check(bob["buttons"] == ["unmute", "kick", "ban"],
                   f"a click on mute marks the member muted in the host's list, and offers unmute: {bob}")
        self.wait_js(b, MEMBERS_JS + "return rows.some((r) => r.name === 'bob' && r.tags.includes('muted'));",
                     5, "the muted tag in bob's own list")
        b.type("can anyone hear me")
        refused = self.wait_js(b, """const line = [...document.querySelectorAll('#log .line.error')].pop();
                                     return line && line.textContent.includes('muted') && line.textContent;""",
                               5, "bob's chat refused while muted")
        self.check("can anyone hear me" not in a.js("return document.getElementById('log').textContent"),
                   f"a muted member's chat is refused and not shown to others ({refused!r})")

        self.wait_js(a, "return document.getElementById('video').readyState >= 2", 10, "the video's first frame")
        self.moderation_screenshot(a)

        a.js("window.prompt = () => 'testing'")
        self.click(a, moderate.format("kick"), "bob's kick button")
        removed = self.wait_js(b, CLOSED_JS, 5, "the kicked window to say it was removed")
        self.check(removed.startswith("You were removed from the room by a host.") and "testing" in removed
                   and "alice" in removed,
                   f"the kicked window says who removed it and why: {removed!r}")
        self.wait_js(a, MEMBERS_JS + "return rows.length === 1;", 5, "bob gone from alice's list")
        told = self.wait_js(a, LOG_JS + "const t = lines.filter((l) => /^bob was (kicked|removed)/.test(l.text)).map((l) => l.text);"
                                " return t.length && t;", 5, "the kick in alice's log")
        self.check(told == ["bob was kicked by alice (testing)"],
                   f"the host's log says once who removed the member and why (the room's notice): {told}")

        b.open(f"{room_url}?name=bobby")
        refusal = self.wait_js(b, CLOSED_JS, 5, "the kicked browser, back under another name, to be refused")
        self.check(refusal.startswith("You cannot enter this room right now.") and "kicked" in refusal
                   and "testing" in refusal,
                   f"the kicked browser is refused under another name, and told of the kick: {refusal!r}")
        self.check(a.js(MEMBERS_JS + "return rows.map((r) => r.name);") == ["alice"],
                   "the refused browser never appeared in the room")
        log(f"  removed: \"{removed}\"")
        log(f"  refused: \"{refusal}\"")
        log(f"  moderation checks took {time.monotonic() - started:.1f} s")

    def click(self, window, xpath, what):
        """Finds the button and clicks it in one script, until it is there: the member
        list is redrawn on every room event, so a button found by one call and
        clicked by the next may no longer be on the page."""
        self.wait_js(window, f"""const found = document.evaluate({json.dumps(xpath)}, document, null,
                                     XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue;
                                 if (!found) return false;
                                 found.click();
                                 return true;""", 5, what)

    def moderation_screenshot(self, window):
        """The host's window: the member list with mute (now unmute), kick and ban."""
        window.js("document.getElementById('chat-input').blur()")
        data = window.driver.get_screenshot_as_png()
        _, variance, colours, width, height = window.region(data, "members", step=1)
        self.check(width > 0 and height > 0 and variance > 50 and colours > 4,
                   f"the moderation screenshot's member list is not blank (luma variance {variance:.0f}, {colours} colours)")
        self.moderation_png = data
        self.keep_screenshot(data, self.args.moderation_screenshot, f"  screenshot: {self.args.moderation_screenshot}")
