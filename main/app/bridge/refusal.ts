/** A renderer call refused before anything happened (the sender, the channel, the payload or the state it asks of is wrong). */
export class BridgeRefusal extends Error {
  override readonly name = 'BridgeRefusal';
}
