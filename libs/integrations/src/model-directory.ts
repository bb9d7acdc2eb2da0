import { Injectable } from '@nestjs/common';
import { listModels } from './catalog';
import { ProviderDirectory } from './provider-directory';

export interface OpenAiModel {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

export interface OpenAiModelList {
  object: 'list';
  data: OpenAiModel[];
}

/** Catalog model ids per provider: the catalog is static, so this is built once per provider. */
const catalogIds = new Map<string, readonly string[]>();

function catalogModelIds(provider: string): readonly string[] {
  let ids = catalogIds.get(provider);
  if (!ids) {
    ids = listModels(provider).map((model) => model.id);
    catalogIds.set(provider, ids);
  }
  return ids;
}

interface CachedList {
  generation: number;
  validUntil: number;
  list: OpenAiModelList;
  byId: Map<string, OpenAiModel>;
}

/**
 * `GET /models` for a workspace: the models it may use across its usable providers (allowed
 * models when an integration restricts them, else the catalog's models of the provider minus
 * disabled ones, plus enabled custom models), in OpenAI's list shape. Answered from the provider
 * index; kept per workspace until the index reloads or a provider in it expires.
 */
@Injectable()
export class ModelDirectory {
  private readonly cache = new Map<string, CachedList>();

  constructor(private readonly providers: ProviderDirectory) {
    providers.onReload(() => this.cache.clear());
  }

  listForWorkspace(workspaceId: string): OpenAiModelList {
    return this.entry(workspaceId).list;
  }

  /** One model of the workspace's list (`GET /models/{model}`), or null. */
  findForWorkspace(workspaceId: string, model: string): OpenAiModel | null {
    return this.entry(workspaceId).byId.get(model) ?? null;
  }

  private entry(workspaceId: string): CachedList {
    const now = Date.now();
    const cached = this.cache.get(workspaceId);
    if (cached && cached.generation === this.providers.generation && now < cached.validUntil) return cached;
    const byId = new Map<string, OpenAiModel>();
    let validUntil = Number.POSITIVE_INFINITY;
    const usable = this.providers
      .usableInWorkspace(workspaceId, now)
      .sort(
        (a, b) =>
          a.row.created_at.getTime() - b.row.created_at.getTime() || (a.row.slug < b.row.slug ? -1 : 1),
      );
    for (const { row, rules, providerName } of usable) {
      if (row.expires_at) validUntil = Math.min(validUntil, row.expires_at.getTime());
      const created = Math.floor(row.created_at.getTime() / 1000);
      const denied = new Set(rules.deniedModels);
      const ids = rules.allowedModels ?? [
        ...catalogModelIds(providerName).filter((id) => !denied.has(id)),
        ...rules.customModels,
      ];
      for (const id of ids) {
        if (!byId.has(id)) byId.set(id, { id, object: 'model', created, owned_by: providerName });
      }
    }
    const entry: CachedList = {
      generation: this.providers.generation,
      validUntil,
      list: { object: 'list', data: [...byId.values()] },
      byId,
    };
    if (this.cache.size >= 10_000) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(workspaceId, entry);
    return entry;
  }
}
