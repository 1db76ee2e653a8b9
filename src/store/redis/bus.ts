// Messages between the nodes of one cluster over Redis pub/sub: each node announces what it changed
// (tenants, entries) and drops or reloads what it caches of what another node changed. Pub/sub
// delivers only to connected nodes, so after its subscription is (re)established a node calls the
// resync handlers: whatever it missed while disconnected is reloaded or dropped as a whole.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { connectOrExplain } from './connect.js';

type Handler = (body: unknown) => void | Promise<void>;

export interface BusLogger {
  error(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export class RedisBus {
  /** This process's id: it skips its own messages (it applied the change before announcing it). */
  readonly nodeId = randomBytes(8).toString('hex');
  private readonly handlers = new Map<string, Handler>();
  private readonly resyncs: Array<() => void | Promise<void>> = [];
  private subscribed = false;

  constructor(
    private readonly pub: Redis,
    private readonly sub: Redis,
    private readonly log: BusLogger,
    private readonly channel = 'ttstore:changes',
  ) {}

  /** Handle the messages of `topic` from other nodes. */
  on(topic: string, handler: Handler): void {
    this.handlers.set(topic, handler);
  }

  /** Run after a reconnection, when messages may have been missed. */
  onResync(handler: () => void | Promise<void>): void {
    this.resyncs.push(handler);
  }

  async start(): Promise<void> {
    this.sub.on('message', (channel: string, raw: string) => {
      if (channel === this.channel) this.deliver(raw);
    });
    this.sub.on('ready', () => {
      // ioredis re-subscribes on reconnect; what was published meanwhile is lost, so resync.
      if (!this.subscribed) return;
      this.log.info({}, 'cluster bus reconnected; reloading what other nodes may have changed');
      for (const r of this.resyncs) Promise.resolve(r()).catch((err: unknown) => this.log.error({ err }, 'cluster resync failed'));
    });
    await connectOrExplain(this.sub);
    await this.sub.subscribe(this.channel);
    this.subscribed = true;
  }

  private deliver(raw: string): void {
    let msg: { from?: unknown; topic?: unknown; body?: unknown };
    try {
      msg = JSON.parse(raw) as typeof msg;
    } catch {
      return;
    }
    if (msg.from === this.nodeId || typeof msg.topic !== 'string') return;
    const handler = this.handlers.get(msg.topic);
    if (!handler) return;
    Promise.resolve()
      .then(() => handler(msg.body))
      .catch((err: unknown) => this.log.error({ err, topic: msg.topic }, 'applying a change from another node failed'));
  }

  /** Tell every other node; resolves once Redis has handed the message to their connections. */
  async publish(topic: string, body: unknown = null): Promise<void> {
    await this.pub.publish(this.channel, JSON.stringify({ from: this.nodeId, topic, body }));
  }

  async close(): Promise<void> {
    this.subscribed = false;
    this.sub.disconnect();
  }
}
