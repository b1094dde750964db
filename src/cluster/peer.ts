/**
 * One end of the IPC channel between the primary and a worker: asks with answers, tells without. Both ends
 * declare what they answer and hear (protocol.ts), so an ask and its handler are typed from one declaration.
 */
import type { Ask } from './protocol.js';

type Envelope =
  | { readonly plantstore: 'ask'; readonly id: number; readonly topic: string; readonly payload: unknown }
  | { readonly plantstore: 'answer'; readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly plantstore: 'answer'; readonly id: number; readonly ok: false; readonly message: string }
  | { readonly plantstore: 'tell'; readonly topic: string; readonly payload: unknown };

/** The channel a Peer speaks over: a cluster worker seen from the primary, or the primary from a worker. */
export interface Channel {
  send(message: Envelope): void;
  onMessage(listener: (message: unknown) => void): void;
  /** Called once the other end is gone: its pending asks fail. */
  onGone(listener: () => void): void;
}

function isEnvelope(message: unknown): message is Envelope {
  return typeof message === 'object' && message !== null && 'plantstore' in message;
}

interface Pending {
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
}

/** Answers `Mine`, hears `MyTells`; asks the other end's `Theirs`, tells it `TheirTells`. */
export class Peer<
  Mine extends { readonly [T in keyof Mine]: Ask<unknown, unknown> },
  Theirs extends { readonly [T in keyof Theirs]: Ask<unknown, unknown> },
  MyTells,
  TheirTells,
> {
  private readonly pending = new Map<number, Pending>();
  private readonly handlers = new Map<string, (payload: unknown) => unknown>();
  private readonly listeners = new Map<string, Set<(payload: unknown) => void>>();
  private nextId = 0;
  private gone = false;

  constructor(private readonly channel: Channel) {
    channel.onMessage((message) => {
      if (isEnvelope(message)) this.receive(message);
    });
    channel.onGone(() => {
      this.gone = true;
      for (const pending of this.pending.values()) pending.reject(new Error('the other process is gone'));
      this.pending.clear();
    });
  }

  ask<T extends keyof Theirs & string>(topic: T, payload: Theirs[T]['payload']): Promise<Theirs[T]['answer']> {
    if (this.gone) return Promise.reject(new Error('the other process is gone'));
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      // The other end answers with what its handler for `topic` returned (typed from the same declaration).
      this.pending.set(id, { resolve: (value) => resolve(value as Theirs[T]['answer']), reject });
      this.send({ plantstore: 'ask', id, topic, payload }, reject);
    });
  }

  tell<T extends keyof TheirTells & string>(topic: T, payload: TheirTells[T]): void {
    if (!this.gone) this.send({ plantstore: 'tell', topic, payload }, () => undefined);
  }

  answer<T extends keyof Mine & string>(
    topic: T,
    handler: (payload: Mine[T]['payload']) => Mine[T]['answer'] | Promise<Mine[T]['answer']>,
  ): void {
    // The asking end sent a payload of this topic's declared type.
    this.handlers.set(topic, (payload) => handler(payload as Mine[T]['payload']));
  }

  on<T extends keyof MyTells & string>(topic: T, listener: (payload: MyTells[T]) => void): void {
    const set = this.listeners.get(topic) ?? new Set();
    // The telling end sent a payload of this topic's declared type.
    set.add((payload) => listener(payload as MyTells[T]));
    this.listeners.set(topic, set);
  }

  private send(message: Envelope, fail: (error: Error) => void): void {
    try {
      this.channel.send(message);
    } catch (error) {
      fail(error instanceof Error ? error : new Error(String(error)));
    }
  }

  private receive(message: Envelope): void {
    if (message.plantstore === 'tell') {
      for (const listener of this.listeners.get(message.topic) ?? []) listener(message.payload);
    } else if (message.plantstore === 'answer') {
      const pending = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.ok) pending?.resolve(message.value);
      else pending?.reject(new Error(message.message));
    } else {
      const { id, topic } = message;
      const handler = this.handlers.get(topic);
      const answered =
        handler === undefined
          ? Promise.reject(new Error(`nothing answers '${topic}'`))
          : new Promise((resolve) => resolve(handler(message.payload)));
      answered.then(
        (value) => this.send({ plantstore: 'answer', id, ok: true, value }, () => undefined),
        (error: unknown) =>
          this.send(
            { plantstore: 'answer', id, ok: false, message: error instanceof Error ? error.message : String(error) },
            () => undefined,
          ),
      );
    }
  }
}

/** The primary, seen from a worker. */
export function primaryChannel(): Channel {
  return {
    send: (message) => {
      if (process.send === undefined || !process.connected) throw new Error('the primary is gone');
      process.send(message, undefined, undefined, () => undefined);
    },
    onMessage: (listener) => process.on('message', listener),
    onGone: (listener) => process.once('disconnect', listener),
  };
}
