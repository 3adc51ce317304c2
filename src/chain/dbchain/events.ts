// The registry's five events (reference/arkiv-gen-d.md §3) both ways: the devnet emits them, the block
// decoder reads them. One log per applied op, in op order; there is no expiry event. Decoding is strict
// (topic count, data length, address words), so a log that breaks the shapes is an anomaly, not a guess.
import { encodeAbiParameters, hexToBigInt, numberToHex, type Address, type Hex } from 'viem';
import { EVENT_TOPICS, REGISTRY_ADDRESS, type EventKind } from './abi.ts';

/** One registry event, decoded. */
export type RegistryEvent =
  | { event: 'created'; entityKey: Hex; owner: Address; expiresAt: bigint; creationFlags: number }
  | { event: 'patched'; entityKey: Hex; owner: Address }
  | { event: 'extended'; entityKey: Hex; owner: Address; expiresAt: bigint }
  | { event: 'transferred'; entityKey: Hex; previousOwner: Address; newOwner: Address }
  | { event: 'deleted'; entityKey: Hex; owner: Address };

export interface EventLog {
  address: Address;
  topics: Hex[];
  data: Hex;
}

const topicOf = (address: Address): Hex => numberToHex(hexToBigInt(address), { size: 32 });
const EVENT_BY_TOPIC = new Map(Object.entries(EVENT_TOPICS).map(([k, v]) => [v, k as EventKind]));

/** The log an event is emitted as (address, topics, data). */
export function encodeRegistryEvent(e: RegistryEvent): EventLog {
  const key = e.entityKey.toLowerCase() as Hex;
  const log = (topics: Hex[], data: Hex): EventLog => ({
    address: REGISTRY_ADDRESS,
    topics: [EVENT_TOPICS[e.event], key, ...topics],
    data,
  });
  switch (e.event) {
    case 'created':
      return log(
        [topicOf(e.owner)],
        encodeAbiParameters([{ type: 'uint64' }, { type: 'uint8' }], [e.expiresAt, e.creationFlags]),
      );
    case 'patched':
    case 'deleted':
      return log([topicOf(e.owner)], '0x');
    case 'extended':
      return log([topicOf(e.owner)], encodeAbiParameters([{ type: 'uint64' }], [e.expiresAt]));
    case 'transferred':
      return log([topicOf(e.previousOwner), topicOf(e.newOwner)], '0x');
  }
}

/** Why a log is not a well-formed registry event. */
export class RegistryEventError extends Error {
  override name = 'RegistryEventError';
}

function addressTopic(topic: Hex | undefined, what: string): Address {
  if (topic === undefined || !/^0x0{24}[0-9a-fA-F]{40}$/.test(topic))
    throw new RegistryEventError(`${what} topic is not an address`);
  return `0x${topic.slice(26).toLowerCase()}` as Address;
}

function words(data: Hex, count: number, what: string): bigint[] {
  if (data.length !== 2 + 64 * count || !/^0x[0-9a-fA-F]*$/.test(data))
    throw new RegistryEventError(`${what} data is not ${count} word(s) of hex`);
  return Array.from({ length: count }, (_, i) => hexToBigInt(`0x${data.slice(2 + 64 * i, 66 + 64 * i)}`));
}

function uint64(v: bigint | undefined, what: string): bigint {
  if (v === undefined || v >> 64n !== 0n) throw new RegistryEventError(`${what} is not a uint64`);
  return v;
}

/**
 * The event in a log, or undefined for a log that is not the registry's (another address or topic).
 * @throws RegistryEventError for a registry event whose topics or data break its shape
 */
export function decodeRegistryEvent(log: EventLog): RegistryEvent | undefined {
  if (log.address.toLowerCase() !== REGISTRY_ADDRESS) return undefined;
  const event = log.topics[0] && EVENT_BY_TOPIC.get(log.topics[0].toLowerCase() as Hex);
  if (!event) return undefined;
  const expected = event === 'transferred' ? 4 : 3;
  if (log.topics.length !== expected) throw new RegistryEventError(`${event} log has ${log.topics.length} topics`);
  const entityKey = (log.topics[1] ?? '0x').toLowerCase() as Hex;
  if (!/^0x[0-9a-f]{64}$/.test(entityKey)) throw new RegistryEventError(`${event} log has no entity key`);
  switch (event) {
    case 'created': {
      const [expiresAt, flags] = words(log.data, 2, 'EntityCreated');
      if (flags === undefined || flags > 255n) throw new RegistryEventError('EntityCreated flags are not a uint8');
      return {
        event,
        entityKey,
        owner: addressTopic(log.topics[2], 'owner'),
        expiresAt: uint64(expiresAt, 'EntityCreated expiresAt'),
        creationFlags: Number(flags),
      };
    }
    case 'extended':
      return {
        event,
        entityKey,
        owner: addressTopic(log.topics[2], 'owner'),
        expiresAt: uint64(words(log.data, 1, 'ExpiryExtended')[0], 'ExpiryExtended expiresAt'),
      };
    case 'patched':
    case 'deleted':
      words(log.data, 0, event);
      return { event, entityKey, owner: addressTopic(log.topics[2], 'owner') };
    case 'transferred':
      words(log.data, 0, event);
      return {
        event,
        entityKey,
        previousOwner: addressTopic(log.topics[2], 'previous owner'),
        newOwner: addressTopic(log.topics[3], 'new owner'),
      };
  }
}
