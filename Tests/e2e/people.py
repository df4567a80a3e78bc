"""What a person meets on a fresh room: its recent chat, the empty room's
sentence on how to start, the link box, the host's queue controls, a pasted web
page refused, subtitles, a rename and a kicked page; and the screenshots of the
room at a desktop's size and a phone's."""

import json
import time
from pathlib import Path

from browser_window import By
from page_js import CLOSED_JS, LOG_JS, MEMBERS_JS
from report import Failure, log


class People:
    """For a RoomRun whose windows A and B are free after the access checks."""

    def people(self):
        """What a person meets on a fresh room (people-e2e), after the access
        checks: the room's recent chat on arrival, the empty room's one sentence
        on how to start, the paste-a-link box (watch now, add to the queue), the
        host's queue controls (play next, remove), a pasted web page refused in
        words, a rename that says who, and a kicked page that stops offering to send.
        Window A creates the room (its owner, a host); window B, whose browser
        was kicked from mod-e2e only, comes in second."""
        room = "people-e2e"
        a, b, room_url = self.room_of_their_own(room, "people")
        started = time.monotonic()

        # The recent chat: said before B came, shown in B's log before its welcome line.
        a.open(f"{room_url}?name=alice")
        self.wait_js(a, "return window.cowatch && window.cowatch.connection.phase === 'open' && window.cowatch.model.state",
                     10, "alice's page in the new room")
        said = ["is anyone here yet", "starting in a minute"]
        for line in said:
            a.type(line)
        self.wait_js(a, LOG_JS + f"return lines.filter((l) => l.kind === 'chat' && l.who === 'alice').length === {len(said)};",
                     5, "alice's two lines in her own log")

        # The empty room says how to start once: over the video, nowhere else.
        idle = a.js("""return {overlay: document.getElementById('overlay').hidden ? null
                                 : document.getElementById('overlay-text').textContent,
                               title: document.getElementById('title').textContent,
                               status: document.getElementById('player-status').textContent};""")
        self.check(idle["overlay"] == "Nothing is playing yet. Paste a video link below to watch it together.",
                   f"an empty room says over the video how to start: {idle['overlay']!r}")
        self.check(idle["title"] == "" and idle["status"] == "",
                   f"an empty room has no title and no player status beside it: {idle}")

        b.open(f"{room_url}?name=bob")
        lines = self.wait_js(b, LOG_JS + "return lines.some((l) => l.kind === 'system' && l.text.startsWith('You are ')) && lines;",
                             10, "bob's welcome line")
        welcome = next(i for i, l in enumerate(lines) if l["kind"] == "system" and l["text"].startswith("You are "))
        before = [(l["who"], l["text"]) for l in lines[:welcome] if l["kind"] == "chat"]
        self.check(before == [("alice", f"alice {line}") for line in said],
                   f"a newcomer's log shows the room's recent chat, with who said it, before \"You are ...\": "
                   f"{before} then {lines[welcome]['text']!r}")
        self.check(lines[welcome]["text"] == f"You are bob in room {room}. Type /help for the commands.",
                   f"the newcomer's welcome line follows the recent chat: {lines[welcome]['text']!r}")

        # A pasted link, "Watch now": both windows load it.
        share = "//form[@id='share-form']/button[@data-action='{}']"
        watched = self.media.url("timecode.mp4?people=watch")
        a.driver.find_element(By.ID, "share-url").send_keys(watched)
        a.driver.find_element(By.XPATH, share.format("watch")).click()
        shown = {}
        for window in (a, b):
            shown[window.label] = self.wait_js(window, """const v = document.getElementById('video');
                                        const title = document.getElementById('title').textContent;
                                        return title && v.getAttribute('src') && v.readyState >= 2
                                          && {title, src: v.getAttribute('src')};""",
                                               10, f"window {window.label} to load the pasted link")
        self.check(all(s["src"] == watched and s["title"] in ("timecode.mp4", watched) for s in shown.values()),
                   f"a link pasted with \"Watch now\" plays in both windows, its title shown: {shown}")
        self.check(a.js("return document.getElementById('share-url').value") == "",
                   "the link box is emptied once the link is sent")

        # Another, "Add to queue": it is listed in the other window's queue.
        queued = self.media.url("timecode.mp4?people=queue")
        a.driver.find_element(By.ID, "share-url").send_keys(queued)
        a.driver.find_element(By.XPATH, share.format("queue")).click()
        listed = self.wait_js(b, f"""const items = [...document.querySelectorAll('#queue li')].map((li) => li.textContent);
                                     return items.some((t) => t.includes({json.dumps(queued)})) && items;""",
                              5, "the queued link in bob's queue")
        self.check(len(listed) == 1 and b.js("return document.getElementById('queue-empty').hidden"),
                   f"a link pasted with \"Add to queue\" is listed in the other window's queue: {listed}")
        self.check(a.js("return document.getElementById('video').getAttribute('src')") == watched,
                   "adding to the queue does not change what is playing")

        # Hosts order the queue: a second item, "play next" on it, then "remove".
        second = self.media.url("timecode.mp4?people=second")
        a.type(f"/queue {second} Second item")
        queue_js = "return [...document.querySelectorAll('#queue li .name')].map((n) => n.textContent);"
        self.wait_js(b, queue_js.replace("return ", "const q = ") + " return q.length === 2 && q;", 5,
                     "two items in bob's queue")
        buttons = {w.label: w.js("return [...document.querySelectorAll('#queue li button')].map((b) => b.textContent);")
                   for w in (a, b)}
        self.check(buttons[a.label][:4] == ["play next", "↑", "↓", "remove"] and buttons[b.label] == [],
                   f"the host sees play next, up, down and remove beside each queued item, a member none: {buttons}")
        a.click(By.XPATH, "//ol[@id='queue']/li[2]//button[text()='play next']")
        order = self.wait_js(b, queue_js.replace("return ", "const q = ") + " return q[0] === 'Second item' && q;", 5,
                             "the second item first in bob's queue")
        self.check(order[0] == "Second item", f"\"play next\" moves an item to the top for everyone: {order}")
        # alice's own list shows the new order before she removes its first item.
        self.wait_js(a, queue_js.replace("return ", "const q = ") + " return q[0] === 'Second item' && q;", 5,
                     "the second item first in alice's queue")
        a.click(By.XPATH, "//ol[@id='queue']/li[1]//button[text()='remove']")
        left = self.wait_js(b, queue_js.replace("return ", "const q = ") + " return q.length === 1 && q;", 5,
                            "one item left in bob's queue")
        self.check("Second item" not in left, f"\"remove\" takes the item out for everyone: {left}")

        # A web page pasted by mistake is refused in words, and nothing changes.
        page = self.media.url("watch.html")
        a.driver.find_element(By.ID, "share-url").send_keys(page)
        a.driver.find_element(By.XPATH, share.format("watch")).click()
        # The room has an item: the page asks before replacing it for everyone
        # (docs/browser.md, "On a phone and in the background"); alice shares.
        asked = self.wait_js(a, "const d = document.getElementById('watch-dialog'); return d.open && d.textContent;", 5,
                             "the question before replacing what the room watches")
        self.check("only for you" in asked, f"\"Watch now\" over the room's item asks share or only for me: {asked!r}")
        a.driver.find_element(By.CSS_SELECTOR, "#watch-dialog button[value=share]").click()
        refusal = self.wait_js(a, LOG_JS + "const l = lines.find((l) => l.kind === 'error' && l.text.includes('web page')); return l && l.text;",
                               10, "the refusal of a web page in alice's log")
        self.check("share the address of the video file itself" in refusal
                   and a.js("return document.getElementById('video').getAttribute('src')") == watched,
                   f"a pasted web page is refused in words and the video stays: {refusal!r}")

        # Subtitles: a track the host adds, which bob alone chooses, following the position.
        a.type(f"/subtitles {self.media.url('cues.vtt')} English")
        self.wait_js(b, "return [...document.getElementById('subtitles').options].some((o) => o.textContent === 'Subtitles: English');",
                     5, "the English track in bob's subtitle picker")
        b.js("""const s = document.getElementById('subtitles');
                s.value = s.options[1].value; s.dispatchEvent(new Event('change'));""")
        cue_js = """const t = [...document.getElementById('video').textTracks].find((t) => t.mode === 'showing');
                    const cue = t && t.activeCues && t.activeCues.length ? t.activeCues[0].text : null;"""
        # (Chromium shows a paused video's cue once the position moves: seek first.)
        a.type("/seek 1:35")
        first = self.wait_js(b, cue_js + " return cue === 'cue 9' && cue;", 5, "bob's cue after /seek 1:35")
        a.type("/seek 1:38")
        a.type("/play")
        try:
            moved = self.wait_js(b, cue_js + " return cue === 'cue 10' && cue;", 8, "bob's next cue while playing")
        except Failure as failure:
            # What bob's video and room were doing, so that a miss says why.
            seen = b.js(cue_js + "const v = document.getElementById('video'); const s = document.getElementById('player-status');"
                        " return {cue, time: v.currentTime, paused: v.paused, seeking: v.seeking,"
                        " readyState: v.readyState, status: s && s.textContent};")
            raise Failure(f"{failure}; bob then: {json.dumps(seen)}") from failure
        a.type("/pause")
        shown_a = a.js("return [...document.getElementById('video').textTracks].filter((t) => t.mode === 'showing').length")
        self.check(first == "cue 9" and moved == "cue 10" and shown_a == 0,
                   f"subtitles: bob chose English and saw {first!r} after /seek 1:35, then {moved!r} playing past "
                   f"1:40; alice, who chose none, shows {shown_a} track(s)")

        self.people_screenshots(a)

        # A rename says who was renamed.
        b.type("/nick bobby")
        renamed = self.wait_js(a, LOG_JS + "const l = lines.find((l) => l.text.includes('is now known as')); return l && l.text;",
                               5, "the rename in alice's log")
        self.check(renamed == "bob is now known as bobby.", f"a rename says the old and the new name: {renamed!r}")

        # A kicked page: the chat input is disabled and says why.
        a.js("window.prompt = () => ''")
        member = "//ul[@id='members']/li[span[@class='name' and text()='bobby']]//button[text()='kick']"
        self.wait_js(a, MEMBERS_JS + "return rows.some((r) => r.name === 'bobby' && r.buttons.includes('kick'));",
                     5, "a kick button beside bobby in alice's list")
        a.driver.find_element(By.XPATH, member).click()
        self.wait_js(b, CLOSED_JS, 5, "the kicked window to be closed")
        field = b.js("""const f = document.getElementById('chat-input');
                        return {disabled: f.disabled, placeholder: f.placeholder};""")
        self.check(field == {"disabled": True, "placeholder": "You are not in this room any more."},
                   f"a page closed for good disables its chat input and says why: {field}")
        log(f"  people checks took {time.monotonic() - started:.1f} s")

    def people_screenshots(self, window):
        """The room with a video and a queue, at the window's size and at a phone's;
        at a phone's width the page must not overflow sideways and must stack."""
        window.js("document.getElementById('chat-input').blur(); document.activeElement.blur();")
        desktop = window.driver.get_screenshot_as_png()
        _, variance, colours, _, _ = window.region(desktop, "video")
        self.check(variance > 200 and colours > 8,
                   f"the desktop screenshot's video area is not blank (luma variance {variance:.0f}, {colours} colours)")
        size = window.driver.get_window_size()
        try:
            window.driver.set_window_size(390, 844)
            layout = self.wait_js(window, """const player = document.querySelector('.player').getBoundingClientRect();
                                             const side = document.querySelector('.side').getBoundingClientRect();
                                             return window.innerWidth <= 400 && {
                                               width: window.innerWidth,
                                               scrollWidth: document.documentElement.scrollWidth,
                                               stacked: side.top >= player.bottom && side.left === player.left};""",
                                  5, "the window at a phone's size")
            self.check(layout["scrollWidth"] <= layout["width"] and layout["stacked"],
                       f"at a phone's width the room stacks and does not overflow sideways: {layout}")
            window.repainted()  # the player at its new size
            phone = window.driver.get_screenshot_as_png()
        finally:
            window.driver.set_window_size(size["width"], size["height"])
        self.desktop_png, self.phone_png = desktop, phone
        if self.args.people_screenshots:
            folder = Path(self.args.people_screenshots)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "room-desktop.png").write_bytes(desktop)
            (folder / "room-phone.png").write_bytes(phone)
            log(f"  screenshots: {folder / 'room-desktop.png'}, {folder / 'room-phone.png'} "
                f"(phone layout {layout['width']} px wide)")
