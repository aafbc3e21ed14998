/**
 * A worker that says its hello only when it is sent SIGTERM (which it otherwise ignores), so that
 * a test can have a participant's hello arrive after the broker began to stop. Once its SIGTERM
 * handler is in place it connects to the unix socket CHATTY_TEST_READY and writes its pid there.
 */
import { connect } from 'node:net';
import { WorkerSession, openParticipantFd } from '../../../main/worker/index.js';

const socket = openParticipantFd();
const card = { name: 'late', description: 'says hello late', version: '1.0.0', skills: [] };
process.on('SIGTERM', () => {
  WorkerSession.hello(socket, card).catch(() => {});
});
const ready = connect(process.env['CHATTY_TEST_READY']!, () => ready.write(String(process.pid)));
ready.on('error', () => {});
setInterval(() => {}, 1_000);
