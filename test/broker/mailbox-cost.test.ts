/**
 * Every post costs at least a fixed overhead against the sender's allowance and the recipient's
 * box, so empty (or one-byte) mail cannot be sent without bound (issue 17, item 10).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { MAILBOX_ALLOWANCE_BYTES, MAILBOX_PENDING_BYTES, MAILBOX_POST_MIN_BYTES, Mailboxes } from '../../main/broker/mailbox.js';
import { ROOT, type NodeState } from '../../main/broker/nodes.js';

function node(name: string, kind: NodeState['kind'], tree = 'task-1'): NodeState {
  return { name, kind, role: name, chain: [ROOT, name], otherChains: [], spawnContext: { roster: [] }, roster: [], callers: [], tree };
}

function mailboxes(...nodes: NodeState[]): Mailboxes {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  return new Mailboxes((name) => byName.get(name), () => false);
}

it('an empty post costs 64 bytes: a sender\'s 8 KiB allowance holds 128 of them, to the root or to a node', () => {
  assert.equal(MAILBOX_POST_MIN_BYTES, 64);
  const root = node(ROOT, 'root');
  const sender = node('lead-0', 'worker');
  const other = node('helper-0', 'worker');
  const mail = mailboxes(root, sender, other);
  const most = MAILBOX_ALLOWANCE_BYTES / MAILBOX_POST_MIN_BYTES;
  for (let i = 0; i < most; i++) assert.equal(mail.post(sender, i % 2 === 0 ? ROOT : 'helper-0', '').status, 'pending', `post ${i}`);
  assert.deepEqual(mail.post(sender, ROOT, ''), { status: 'refused', reason: 'over_allowance' });
  assert.equal(mail.drain('helper-0').length, most / 2);
});

it('a post of more than 64 bytes costs its UTF-8 bytes, as before', () => {
  const sender = node('lead-0', 'worker');
  const mail = mailboxes(node(ROOT, 'root'), sender);
  assert.equal(mail.post(sender, ROOT, 'é'.repeat(MAILBOX_ALLOWANCE_BYTES / 2 - 32)).status, 'pending'); // 8128 bytes
  assert.equal(mail.post(sender, ROOT, 'x').status, 'pending', '64 left: one short post');
  assert.deepEqual(mail.post(sender, ROOT, ''), { status: 'refused', reason: 'over_allowance' });
});

it('a recipient\'s box counts each post at least 64 bytes too (the root has no allowance, its mail still fills a box)', () => {
  const root = node(ROOT, 'root');
  const recipient = node('helper-0', 'worker');
  const mail = mailboxes(root, recipient);
  const most = MAILBOX_PENDING_BYTES / MAILBOX_POST_MIN_BYTES;
  for (let i = 0; i < most; i++) assert.equal(mail.post(root, 'helper-0', '').status, 'pending');
  assert.deepEqual(mail.post(root, 'helper-0', ''), { status: 'refused', reason: 'over_allowance' });
  assert.equal(mail.drain('helper-0').length, most);
  assert.equal(mail.post(root, 'helper-0', '').status, 'pending', 'delivered mail frees the box');
});
