import { z } from 'zod';

/**
 * The renderer bridge: every channel between the main process and the (untrusted) renderer, with
 * the schema of what crosses it. The preload mirrors the channel names (a sandboxed preload can
 * require nothing but 'electron'); the browser test fails if the two ever disagree.
 */
export const BRIDGE_CHANNELS = {
  /** renderer → main (invoke): where the gateway is and what it serves. */
  gatewayInfo: 'chatty:gateway-info',
  /** main → renderer (event): one edge-log row. */
  edgeRow: 'chatty:edge-row',
} as const;

export const GatewayInfoSchema = z.strictObject({
  socketPath: z.string(),
  tokenPath: z.string(),
  modules: z.array(z.strictObject({ name: z.string(), version: z.string(), surfaces: z.array(z.string()) })),
});
export type GatewayInfo = z.infer<typeof GatewayInfoSchema>;

export const EdgeRowSchema = z.strictObject({
  time: z.string(),
  method: z.string(),
  path: z.string(),
  status: z.number().int(),
  durationMs: z.number(),
  reason: z.string().optional(),
});

/** What each invoke channel takes from the renderer: nothing, for now. */
export const InvokeRequestSchemas = {
  [BRIDGE_CHANNELS.gatewayInfo]: z.undefined(),
} as const;

export type InvokeChannel = keyof typeof InvokeRequestSchemas;

/** The API the preload exposes as `window.chatty`. */
export interface ChattyBridge {
  gatewayInfo(): Promise<GatewayInfo>;
  onEdgeRow(listener: (row: z.infer<typeof EdgeRowSchema>) => void): () => void;
}
