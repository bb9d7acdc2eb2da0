import type { EntityManager } from 'typeorm';
import type { Principal } from './principal';

/**
 * In-process events between libs that must not import each other (identity -> api-keys, auth).
 * Listeners run in order and are awaited, with the emitter's transaction manager, so a user's
 * removal and the revocation of their keys commit or roll back together.
 */
export interface DomainEventMap {
  'user.deleted': { manager: EntityManager; organisationId: string; userId: string };
  'member.removed': { manager: EntityManager; workspaceId: string; userId: string };
  'workspace.archived': { manager: EntityManager; workspaceId: string };
  /**
   * A workspace was made, inside its transaction. `afterCommit` queues work that must see the
   * commit (reloading an in-memory index); the emitter runs it once the transaction has committed.
   */
  'workspace.created': {
    manager: EntityManager;
    principal: Principal;
    workspaceId: string;
    afterCommit(task: () => Promise<void>): void;
  };
  /** Anything that changes who a principal is (roles, memberships, keys): authentication caches drop. */
  'principals.changed': { reason: string };
}

type Listener<K extends keyof DomainEventMap> = (payload: DomainEventMap[K]) => Promise<void> | void;

export class DomainEvents {
  private readonly listeners = new Map<keyof DomainEventMap, Listener<never>[]>();

  on<K extends keyof DomainEventMap>(event: K, listener: Listener<K>): void {
    const list = this.listeners.get(event) ?? [];
    list.push(listener as Listener<never>);
    this.listeners.set(event, list);
  }

  async emit<K extends keyof DomainEventMap>(event: K, payload: DomainEventMap[K]): Promise<void> {
    for (const listener of this.listeners.get(event) ?? []) await (listener as Listener<K>)(payload);
  }
}
