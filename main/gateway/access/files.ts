/** The files the gateway keeps in its runtime directory. */
export const SOCKET_FILE = 'gateway.sock';
export const TOKEN_FILE = 'gateway.token';
export const EDGE_LOG_FILE = 'edge.log';
