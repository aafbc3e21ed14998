// bench/broker's floor: a bare Node child that opens its fd-3 socketpair end and exits. Nothing
// else: what spawning a worker costs before any protocol.
import { Socket } from 'node:net';

new Socket({ fd: 3, readable: true, writable: true });
process.exit(0);
