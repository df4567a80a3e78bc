"""A host's door controls: a locked room, an invite link that lets one person in,
and a password the page asks for."""

import re
import time

from browser_window import By, Keys
from page_js import CLOSED_JS, CONTROLS_JS, MEMBERS_JS
from report import log


class Access:
    """For a RoomRun after the moderation checks (its room, mod-e2e)."""

    def access(self):
        """A host's door controls on the same room, after the moderation checks:
        lock, a newcomer refused, an invite link that lets it in (once), unlock,
        and a password the page asks for. Window A is the host; window C, free
        since the measurements, is the newcomer (B's browser was kicked)."""
        a, c = self.windows[0], self.windows[2]
        room = "mod-e2e"
        room_url = self.server.url(f"/rooms/{room}")
        started = time.monotonic()
        door = "//div[@id='room-controls']/button[text()='{}']"

        controls = self.wait_js(a, CONTROLS_JS + "return !controls.hidden && controls.buttons.length && controls;",
                                5, "the door controls above alice's member list")
        self.check(controls["buttons"] == ["lock room", "invite link"] and not controls["tags"],
                   f"the host sees lock room and invite link above the member list: {controls}")

        # Locked: a newcomer without an invite is refused, and never appears.
        a.driver.find_element(By.XPATH, door.format("lock room")).click()
        controls = self.wait_js(a, CONTROLS_JS + "return controls.tags.includes('locked') && controls;",
                                5, "the locked tag in alice's door controls")
        self.check(controls["buttons"] == ["unlock room", "invite link"],
                   f"a click on lock room tags the room locked and offers unlock room: {controls}")
        c.open(f"{room_url}?name=carol")
        refusal = self.wait_js(c, CLOSED_JS, 5, "the newcomer to be refused at the locked door")
        self.check(refusal == "This room is locked: only an invite link from a host lets you in.",
                   f"a newcomer without an invite is refused from a locked room: {refusal!r}")
        self.check("carol" not in a.js(MEMBERS_JS + "return rows.map((r) => r.name);"),
                   "the refused newcomer never appeared in the host's member list")

        # An invite link, shown to the host alone, lets the newcomer in once.
        a.driver.find_element(By.XPATH, door.format("invite link")).click()
        notice = self.wait_js(a, """const box = document.querySelector('#secrets .secret.invite input');
                                    return box ? box.value : null;""",
                              5, "the invite link's box beside the host's chat")
        match = re.search(r"(\S+)/rooms/" + re.escape(room) + r"\?invite=(\S+)", notice)
        self.check(match and match.group(1) == self.server.url(""),
                   f"the host's page shows an invite link to the room: {notice!r}")
        link = match.group(0)
        c.open(link)
        self.wait_js(a, MEMBERS_JS + "return rows.some((r) => r.name === 'carol');", 5,
                     "carol, with the invite link, in alice's member list")
        member = self.wait_js(c, CONTROLS_JS + """const c = window.cowatch;
                                  return c && c.connection.phase === 'open' && c.model.meId && c.model.state
                                    && {controls, url: location.href};""",
                              5, "carol's page in the room")
        self.check("invite=" not in member["url"] and "invite=" not in c.driver.current_url,
                   f"the invite token is taken out of the address bar: {member['url']!r}")
        self.check(member["controls"]["hidden"] and not member["controls"]["buttons"],
                   f"a member who is not a host has no door controls: {member['controls']}")
        # Someone else with the same link: a tab of its own, since this tab would
        # come back as carol, who is in the room already (its resume token).
        c.driver.switch_to.new_window("tab")
        c.open(link)
        reused = self.wait_js(c, CLOSED_JS, 5, "the used invite link to be refused")
        # Its holder is told the link is spent, not to go and get an invite.
        self.check(reused.startswith("This invite link no longer lets anyone in"),
                   f"an invite link lets one person in: used again, it is refused as spent: {reused!r}")

        # Unlocked, with a password: the page asks for it (a masked field), and tries again.
        a.driver.find_element(By.XPATH, door.format("unlock room")).click()
        self.wait_js(a, CONTROLS_JS + "return !controls.tags.includes('locked') && controls.buttons[0] === 'lock room';",
                     5, "the room unlocked in alice's door controls")
        a.type("/password pw")
        self.wait_js(a, CONTROLS_JS + "return controls.tags.includes('password');", 5,
                     "the password tag in alice's door controls")
        c.open(f"{room_url}?name=dora")
        asked = []
        for attempt, expected in (("not-it", "Ask a host of the room for it, or for an invite link."),
                                  ("pw", "That password is not the room's. Try again:")):
            said = self.wait_js(c, """const field = document.getElementById('door-password');
                                      return field && field.type === 'password' && !document.getElementById('door').hidden
                                        && document.getElementById('door-text').textContent;""",
                                5, "the door to ask the password")
            asked.append(said)
            c.driver.find_element(By.ID, "door-password").send_keys(attempt, Keys.ENTER)
        self.wait_js(a, MEMBERS_JS + "return rows.some((r) => r.name === 'dora');", 5,
                     "dora, after the password, in alice's member list")
        self.check(asked == ["Ask a host of the room for it, or for an invite link.",
                             "That password is not the room's. Try again:"],
                   f"the page asks for the password in a masked field, and again after a wrong one: {asked}")
        errors = c.js("return [...document.querySelectorAll('#log .line.error .text')].map((l) => l.textContent)")
        self.check(not [e for e in errors if "password" in e],
                   f"the refusals are said at the door, not again in the newcomer's log: {errors}")
        log(f"  locked: \"{refusal}\"")
        log(f"  access checks took {time.monotonic() - started:.1f} s")
