import { Socket } from 'node:net';

/** The descriptor the broker hands its worker: one end of a socketpair. */
export const PARTICIPANT_FD = 3;

/** Opens the worker's end of the connection the broker made for it. */
export function openParticipantFd(fd: number = PARTICIPANT_FD): Socket {
  return new Socket({ fd, readable: true, writable: true });
}
