import type { Readable } from 'node:stream';
import type { ByteRange, Storage, StoredObject } from '../storage/storage.ts';

/**
 * A view of the Storage interface for a reader given a time budget (the share page's manifest,
 * contract §9): aborting `signal` destroys every stream the view has handed out and fails later
 * reads, so the work stops instead of running on in the background once its caller has given up (a
 * large tar.gz is streamed whole to be listed).
 */

export class ArchiveReadAborted extends Error {}

export function abortableReads(storage: Storage, signal: AbortSignal): Storage {
  const open = new Set<Readable>();
  const stopped = () => new ArchiveReadAborted('The archive read was stopped');
  signal.addEventListener(
    'abort',
    () => {
      for (const stream of open) stream.destroy(stopped());
      open.clear();
    },
    { once: true },
  );

  async function get(key: string, range?: ByteRange): Promise<StoredObject> {
    if (signal.aborted) throw stopped();
    const object = await storage.get(key, range);
    if (signal.aborted) {
      object.stream.destroy();
      throw stopped();
    }
    open.add(object.stream);
    object.stream.once('close', () => open.delete(object.stream));
    return object;
  }

  return new Proxy(storage, {
    get(target, property) {
      if (property === 'get') return get;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
