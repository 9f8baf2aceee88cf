import type { AdminRoleName } from '../admins/entities/admin-role.entity';
import type { ApiKeyScope } from '../api-keys/entities/api-key.entity';

export const ACCESS_RULE = 'access:rule';

export const MACHINE_CREDENTIALS = ['api-key', 'log-shipper-key', 'callback-token', 'basic'] as const;
export type MachineCredential = (typeof MACHINE_CREDENTIALS)[number];

/**
 * What a route asks of a customer API key (platform.md "Using a key"): `read` is opened by `read`
 * and `full` keys, `sending` by `sending` and `full` keys, `write` by `full` keys only, `any` by
 * every key (a message sent by HTTP: read by its sender and by readers alike).
 */
export type KeyAccess = 'read' | 'sending' | 'write' | 'any';

export const KEY_SCOPES_FOR: Record<KeyAccess, readonly ApiKeyScope[]> = {
  read: ['read', 'full'],
  sending: ['sending', 'full'],
  write: ['full'],
  any: ['read', 'sending', 'full'],
};

/** Who may call a route. Every route declares one (the access guard refuses routes without). */
export type AccessRule =
  | { kind: 'public' }
  | { kind: 'refresh-token' }
  /** A user of a company (its owner when `ownerOnly`); also an API key when `key` says which. */
  | { kind: 'user'; ownerOnly: boolean; key?: KeyAccess }
  | { kind: 'admin'; roles: readonly AdminRoleName[] }
  | { kind: 'machine'; credential: MachineCredential };
