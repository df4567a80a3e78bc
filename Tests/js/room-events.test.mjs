// The room's events into what the page knows (static/model/events.js): the model
// as they leave it, and the words they put in the log and tell screen readers.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyChanges, emptyModel, heard, replyLine, resumeRefused, welcomed, welcomeLines } from '../../Sources/CowatchWeb/Web/static/model/events.js';

const ann = { id: 'p1', name: 'ann', role: 'host' };
const bob = { id: 'p2', name: 'bob', role: 'member' };

/** A welcome, its changes written into the model as the page writes them; returns whether it was a reconnect. */
function welcome(model, event) {
  const { returning, changes } = welcomed(model, event);
  applyChanges(model, changes);
  return returning;
}

/** An event, its changes written into the model as room/events.js writes them. */
function hear(model, event) {
  const news = heard(model, event);
  if (!news.stale) applyChanges(model, news.changes);
  return news;
}

function welcomedAs(you = ann, others = [bob]) {
  const model = emptyModel();
  welcome(model, { type: 'welcome', you, participants: [you, ...others] });
  return model;
}

test('a welcome makes this page its member, with the members as they are now', () => {
  const model = emptyModel();
  model.state = { seq: 9 };
  assert.equal(welcome(model, { you: { ...ann, resume: 'r' }, participants: [{ ...ann, joined: true }, bob] }), false);
  assert.equal(model.meId, 'p1');
  assert.deepEqual(model.participants.get('p1'), { ...ann, joined: true, resume: 'r' });
  assert.equal(model.participants.size, 2);
  assert.equal(model.state, null, 'a restarted server may count seq anew: the next state is taken');
  assert.equal(welcome(model, { you: ann, participants: [ann] }), true, 'the same member again: a reconnect');
  assert.equal(model.participants.size, 1, 'who left meanwhile is gone');
});

test('a state is taken unless it is older than the one applied', () => {
  const model = welcomedAs();
  const first = hear(model, { type: 'state', seq: 2 });
  assert.equal(first.state.seq, 2);
  assert.equal(first.render, true);
  assert.equal(model.state.seq, 2);
  const old = hear(model, { type: 'state', seq: 1 });
  assert.equal(old.stale, true);
  assert.equal(old.state, null);
  assert.equal(model.state.seq, 2);
});

test('a newcomer arrives in the log and for screen readers; this page\'s own member is handed on', () => {
  const model = welcomedAs();
  const cid = hear(model, { type: 'participant', change: 'joined', participant: { id: 'p3', name: 'cid' } });
  assert.deepEqual(cid.log, [['system', 'cid arrived.']]);
  assert.deepEqual(cid.announce, [['say', 'cid arrived.']]);
  assert.equal(cid.me, null);
  assert.equal(model.participants.get('p3').lastChange, 'joined');

  const me = hear(model, { type: 'participant', change: 'suspended', participant: { ...ann, suspensions: ['catchup'] } });
  assert.deepEqual(me.me, { ...ann, suspensions: ['catchup'], lastChange: 'suspended' });
  assert.deepEqual(me.log, [], 'a known member changing is not news');

  const renamed = hear(model, { type: 'participant', change: 'renamed', participant: { ...bob, name: 'robert' } });
  assert.deepEqual(renamed.log, [['system', 'bob is now known as robert.']]);
  assert.deepEqual(renamed.announce, []);
});

test('a member who leaves is said by name; a kick or a ban is the notice\'s to say, and the bans list is asked again', () => {
  const model = welcomedAs();
  const left = hear(model, { type: 'participant-left', id: 'p2', reason: 'left' });
  assert.deepEqual(left.log, [['system', 'bob left.']]);
  assert.deepEqual(left.announce, [['say', 'bob left.']]);
  assert.equal(left.refresh, null);
  assert.equal(model.participants.has('p2'), false);

  const kicked = hear(model, { type: 'participant-left', id: 'p9', name: 'eve', reason: 'banned' });
  assert.deepEqual(kicked.log, []);
  assert.equal(kicked.refresh, 'bans');
  assert.equal(kicked.render, true);
});

test('chat is logged; another member\'s is also told, this page\'s own is not', () => {
  const model = welcomedAs();
  const theirs = hear(model, { type: 'chat', from: 'p2', name: 'bob', text: 'hi', at: 5 });
  assert.deepEqual(theirs.log, [['chat', 'hi', { name: 'bob', at: 5 }]]);
  assert.deepEqual(theirs.announce, [['chat', 'bob', 'hi', undefined]]);
  const mine = hear(model, { type: 'chat', from: 'p1', name: 'ann', text: 'waves', me: true, at: 6 });
  assert.deepEqual(mine.log, [['me', 'waves', { name: 'ann', at: 6 }]]);
  assert.deepEqual(mine.announce, []);
  assert.equal(mine.render, false);
});

test('a notice is logged and told as news, with its cause', () => {
  const news = hear(welcomedAs(), { type: 'notice', text: 'ann paused', cause: { command: 'pause' } });
  assert.deepEqual(news.log, [['notice', 'ann paused']]);
  assert.deepEqual(news.announce, [['news', 'ann paused', { command: 'pause' }]]);
});

test('an error is logged and said, but not a raced player report nor a refusal the door says', () => {
  const model = welcomedAs();
  assert.deepEqual(hear(model, { type: 'error', code: 'forbidden', command: 'play', message: 'Only hosts may.' }).log,
    [['error', 'Only hosts may.']]);
  assert.deepEqual(hear(model, { type: 'error', code: 'bad-args' }).announce, [['say', 'bad-args']]);
  assert.deepEqual(hear(model, { type: 'error', code: 'stale-report', command: 'ready' }).log, []);
  assert.deepEqual(hear(model, { type: 'error', code: 'locked' }).log, []);
  assert.deepEqual(hear(model, { type: 'error', code: 'locked', command: 'lock', message: 'Already.' }).log,
    [['error', 'Already.']], 'a command\'s refusal is not the door\'s');
});

test('events the page carries out itself, and unknown ones, change nothing here', () => {
  const model = welcomedAs();
  for (const type of ['time', 'catchup', 'reply', 'something-new']) {
    assert.deepEqual(hear(model, { type }),
      { changes: {}, stale: false, state: null, me: null, log: [], announce: [], refresh: null, render: false });
  }
});

test('deciding leaves the model as it is: its changes are returned, and written only by applyChanges', () => {
  const model = welcomedAs();
  const before = { meId: model.meId, participants: new Map(model.participants), state: model.state };
  const news = heard(model, { type: 'participant-left', id: 'p2', reason: 'left' });
  const state = heard(model, { type: 'state', seq: 4 });
  const welcome = welcomed(model, { you: ann, participants: [ann] });
  assert.deepEqual({ meId: model.meId, participants: model.participants, state: model.state }, before);
  assert.deepEqual(news.changes, { remove: ['p2'] });
  assert.deepEqual(state.changes, { state: { type: 'state', seq: 4 } });
  assert.equal(welcome.returning, true);
  applyChanges(model, news.changes);
  assert.equal(model.participants.has('p2'), false);
});

test('a rename says the name before as the event gives it', () => {
  const model = welcomedAs();
  const renamed = heard(model, { type: 'participant', change: 'renamed', from: 'bobby', participant: { ...bob, name: 'robert' } });
  assert.deepEqual(renamed.log, [['system', 'bobby is now known as robert.']]);
});

test('a reply the host panel showed only points there; any other is logged as it came', () => {
  assert.deepEqual(replyLine({ command: 'invite' }, true)[0], 'notice');
  assert.deepEqual(replyLine({ command: 'token' }, true)[0], 'notice');
  assert.equal(replyLine({ command: 'bans' }, true), null);
  assert.deepEqual(replyLine({ command: 'who', text: 'ann, bob' }, false), ['reply', 'ann, bob']);
  assert.deepEqual(replyLine({ type: 'reply', command: 'x' }, false), ['reply', JSON.stringify({ type: 'reply', command: 'x' }, null, 2)]);
});

test('a refused /resume is what ends a seek-bar suspension', () => {
  assert.equal(resumeRefused({ type: 'error', command: 'resume', code: 'forbidden' }), true);
  assert.equal(resumeRefused({ type: 'error', command: 'seek', code: 'forbidden' }), false);
  assert.equal(resumeRefused({ type: 'reply', command: 'resume' }), false);
});

test('a new member\'s welcome: what was said before, who this page is, in the page\'s word for its role', () => {
  const event = {
    room: 'lobby', you: { ...ann, owner: true },
    chat: [{ name: 'bob', text: 'hi', at: 1 }, { name: 'bob', text: 'waves', me: true, at: 2 }],
  };
  assert.deepEqual(welcomeLines(event, { returning: false, owner: { verdict: 'none', use: null } }), [
    ['chat', 'hi', { name: 'bob', at: 1 }],
    ['me', 'waves', { name: 'bob', at: 2 }],
    ['system', 'You are ann in room lobby, its owner. Type /help for the commands.'],
  ]);
  const member = welcomeLines({ room: 'lobby', you: bob }, { returning: false, owner: { verdict: 'none', use: null } });
  assert.deepEqual(member, [['system', 'You are bob in room lobby. Type /help for the commands.']]);
});

test('a returning member is told it is back, and the chat is not shown again', () => {
  const event = { room: 'lobby', you: ann, chat: [{ name: 'bob', text: 'hi', at: 1 }] };
  assert.deepEqual(welcomeLines(event, { returning: true, owner: { verdict: 'none', use: null } }), [['system', 'Reconnected.']]);
});

test('what became of a link\'s owner key is said after who this page is', () => {
  const event = { room: 'lobby', you: ann };
  const said = (owner) => welcomeLines(event, { returning: true, owner }).map(([kind, text]) => [kind, text.split(':')[0].split('.')[0]]);
  assert.deepEqual(said({ verdict: 'created', use: 'k' }),
    [['notice', 'You created this room and own it'], ['system', 'Reconnected']]);
  assert.deepEqual(said({ verdict: 'accepted', use: 'k' })[1], ['notice', 'The owner key in the link you opened was accepted']);
  assert.deepEqual(said({ verdict: 'unchecked', use: 'k' })[1], ['notice', 'The owner key in the link you opened was not checked']);
  const refused = welcomeLines(event, { returning: true, owner: { verdict: 'refused', use: 'kept' } })[1];
  assert.equal(refused[0], 'error');
  assert.match(refused[1], /kept for the room is unchanged, and used instead\.$/);
  assert.match(welcomeLines(event, { returning: true, owner: { verdict: 'refused', use: null } })[1][1],
    /Nothing was kept; you are in the room as a member\.$/);
});
