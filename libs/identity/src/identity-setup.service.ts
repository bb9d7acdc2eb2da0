import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { OrganisationEntity } from './entities/organisation.entity';
import { UserEntity } from './entities/user.entity';
import { WorkspaceMemberEntity } from './entities/workspace-member.entity';
import { WorkspaceEntity } from './entities/workspace.entity';

export interface InitialIdentity {
  organisationId: string;
  ownerId: string;
  workspaceId: string;
}

/** First start with an empty database: one organisation, its owner and a default workspace. */
@Injectable()
export class IdentitySetupService {
  async isEmpty(manager: EntityManager): Promise<boolean> {
    return (await manager.getRepository(OrganisationEntity).count()) === 0;
  }

  async createInitial(manager: EntityManager, ownerEmail: string): Promise<InitialIdentity> {
    const organisationId = randomUUID();
    const ownerId = randomUUID();
    const workspaceId = randomUUID();
    await manager
      .getRepository(OrganisationEntity)
      .insert({ id: organisationId, name: 'Default Organisation', slug: 'default', settings: {} });
    await manager.getRepository(UserEntity).insert({
      id: ownerId,
      organisation_id: organisationId,
      email: ownerEmail.toLowerCase(),
      first_name: 'Owner',
      last_name: null,
      role: 'owner',
    });
    await manager.getRepository(WorkspaceEntity).insert({
      id: workspaceId,
      organisation_id: organisationId,
      name: 'Default',
      slug: 'default',
      description: 'Created at first start',
      status: 'active',
      is_default: true,
      defaults: null,
      usage_limits: [],
      rate_limits: [],
      settings: {},
    });
    await manager.getRepository(WorkspaceMemberEntity).insert({
      id: randomUUID(),
      organisation_id: organisationId,
      workspace_id: workspaceId,
      user_id: ownerId,
      role: 'admin',
    });
    return { organisationId, ownerId, workspaceId };
  }
}
