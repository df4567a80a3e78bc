"""What the scenarios read off the room page, as script prologues: each defines a
constant (controls, lines, rows) that the script after it returns from."""

CONTROLS_JS = """
const box = document.getElementById('room-controls');
const controls = {
  hidden: box.hidden,
  buttons: [...box.querySelectorAll('button.moderate')].map((b) => b.textContent),
  tags: [...box.querySelectorAll('.tag')].map((t) => t.textContent),
};
"""

LOG_JS = """
const lines = [...document.querySelectorAll('#log .line')].map((line) => ({
  kind: line.classList[1],
  who: line.querySelector('.who') ? line.querySelector('.who').textContent : null,
  text: line.querySelector('.text') ? line.querySelector('.text').textContent : '',
}));
"""

CLOSED_JS = """const door = document.getElementById('door');
return window.cowatch && window.cowatch.connection.phase === 'closed'
  && !door.hidden && document.getElementById('door-text').textContent;"""

MEMBERS_JS = """
const rows = [...document.querySelectorAll('#members li')].map((li) => ({
  name: li.querySelector('.name').textContent,
  tags: [...li.querySelectorAll('.tag, .badge')].map((t) => t.textContent),
  buttons: [...li.querySelectorAll('button.moderate')].map((b) => b.textContent),
}));
"""
