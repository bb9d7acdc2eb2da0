import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { DataSource, EntityManager, In, LessThanOrEqual, MoreThan } from 'typeorm';
import { APP_CONFIG, AppConfig } from '@switchboard/config';
import { validateKeyScopes } from '@switchboard/access';
import { Principal, WorkspaceRole, listEnvelope, toPage } from '@switchboard/common';
import { InviteEntity } from './entities/invite.entity';
import { UserEntity } from './entities/user.entity';
import { WorkspaceMemberEntity } from './entities/workspace-member.entity';
import { CreateInviteDto, ListInvitesQueryDto } from './dto/user.dto';
import { IdentityErrors } from './identity.errors';
import { effectiveInviteStatus, toInviteResponse } from './identity.mapper';
import { WorkspacesService } from './workspaces.service';

export function hashInviteToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export interface ConsumedInvite {
  inviteId: string;
  user: UserEntity;
  workspaces: { workspace_id: string; role: WorkspaceRole }[];
  scopes: string[] | null;
}

@Injectable()
export class InvitesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly workspaces: WorkspacesService,
  ) {}

  async create(principal: Principal, dto: CreateInviteDto) {
    const email = dto.email.toLowerCase();
    return this.dataSource.transaction(async (manager) => {
      if (
        await manager
          .getRepository(UserEntity)
          .exists({ where: { organisation_id: principal.organisationId, email } })
      ) {
        throw IdentityErrors.emailTaken(email);
      }
      const pending = await manager.getRepository(InviteEntity).exists({
        where: {
          organisation_id: principal.organisationId,
          email,
          status: 'pending',
          expires_at: MoreThan(new Date()),
        },
      });
      if (pending) throw IdentityErrors.pendingInviteExists(email);
      const workspaces: { workspace_id: string; role: WorkspaceRole }[] = [];
      for (const item of dto.workspaces ?? []) {
        const workspace = await this.workspaces.findVisible(principal, item.id, manager);
        if (workspace.status === 'archived') throw IdentityErrors.workspaceArchived(item.id);
        if (!workspaces.some((entry) => entry.workspace_id === workspace.id)) {
          workspaces.push({ workspace_id: workspace.id, role: item.role });
        }
      }
      if (dto.workspace_api_key_details) {
        validateKeyScopes(
          dto.workspace_api_key_details.scopes,
          'workspace-user',
          undefined,
          'workspace_api_key_details.scopes',
        );
      }
      const token = randomBytes(32).toString('base64url');
      const invite = manager.getRepository(InviteEntity).create({
        id: randomUUID(),
        organisation_id: principal.organisationId,
        email,
        role: dto.role,
        workspaces,
        workspace_api_key_details: dto.workspace_api_key_details ?? null,
        token_hash: hashInviteToken(token),
        status: 'pending',
        invited_by: principal.user?.id ?? null,
        expires_at: new Date(Date.now() + this.config.inviteTtlMs),
        accepted_at: null,
      });
      await manager.getRepository(InviteEntity).insert(invite);
      return this.withToken(invite, token);
    });
  }

  async list(principal: Principal, query: ListInvitesQueryDto) {
    const { skip, take } = toPage(query);
    const where: Record<string, unknown> = { organisation_id: principal.organisationId };
    if (query.role) where.role = query.role;
    if (query.email) where.email = query.email.toLowerCase();
    const now = new Date();
    if (query.status === 'pending') Object.assign(where, { status: 'pending', expires_at: MoreThan(now) });
    else if (query.status === 'expired') {
      Object.assign(where, { status: In(['pending', 'expired']), expires_at: LessThanOrEqual(now) });
    } else if (query.status) where.status = query.status;
    const [rows, total] = await this.dataSource
      .getRepository(InviteEntity)
      .findAndCount({ where, order: { created_at: 'DESC', id: 'ASC' }, skip, take });
    return listEnvelope(rows.map(toInviteResponse), total);
  }

  async get(principal: Principal, inviteId: string) {
    return toInviteResponse(await this.find(this.dataSource.manager, principal, inviteId));
  }

  /** Deleting cancels: the token stops working and the record stays for the audit trail. */
  async cancel(principal: Principal, inviteId: string) {
    const invite = await this.find(this.dataSource.manager, principal, inviteId);
    if (invite.status === 'accepted') throw IdentityErrors.inviteNotPending(invite.status);
    invite.status = 'cancelled';
    await this.dataSource.getRepository(InviteEntity).save(invite, { transaction: false });
    return { object: 'invite' as const, id: invite.id, deleted: true };
  }

  /** A fresh token and expiry; the old token stops working. */
  async resend(principal: Principal, inviteId: string) {
    const invite = await this.find(this.dataSource.manager, principal, inviteId);
    const status = effectiveInviteStatus(invite);
    if (status !== 'pending' && status !== 'expired') throw IdentityErrors.inviteNotPending(status);
    const token = randomBytes(32).toString('base64url');
    invite.token_hash = hashInviteToken(token);
    invite.status = 'pending';
    invite.expires_at = new Date(Date.now() + this.config.inviteTtlMs);
    await this.dataSource.getRepository(InviteEntity).save(invite, { transaction: false });
    return this.withToken(invite, token);
  }

  /** Single use: marks the invite accepted and creates the user and memberships inside `manager`'s transaction. */
  async consume(
    manager: EntityManager,
    token: string,
    names: { first_name?: string; last_name?: string },
  ): Promise<ConsumedInvite> {
    const repository = manager.getRepository(InviteEntity);
    const invite = await repository.findOne({ where: { token_hash: hashInviteToken(token) } });
    if (!invite) throw IdentityErrors.invalidInviteToken();
    const status = effectiveInviteStatus(invite);
    if (status === 'expired') throw IdentityErrors.inviteExpired();
    if (status !== 'pending') throw IdentityErrors.inviteNotPending(status);
    // The conditional update makes two concurrent acceptances of one token race to a single winner.
    const claimed = await repository.update(
      { id: invite.id, status: 'pending' },
      { status: 'accepted', accepted_at: new Date() },
    );
    if (claimed.affected === 0) throw IdentityErrors.inviteNotPending('accepted');
    const users = manager.getRepository(UserEntity);
    if (await users.exists({ where: { organisation_id: invite.organisation_id, email: invite.email } })) {
      throw IdentityErrors.emailTaken(invite.email);
    }
    const user = users.create({
      id: randomUUID(),
      organisation_id: invite.organisation_id,
      email: invite.email,
      first_name: names.first_name ?? null,
      last_name: names.last_name ?? null,
      role: invite.role,
    });
    await users.insert(user);
    if (invite.workspaces.length > 0) {
      await manager.getRepository(WorkspaceMemberEntity).insert(
        invite.workspaces.map((entry) => ({
          id: randomUUID(),
          organisation_id: invite.organisation_id,
          workspace_id: entry.workspace_id,
          user_id: user.id,
          role: entry.role,
        })),
      );
    }
    return {
      inviteId: invite.id,
      user,
      workspaces: invite.workspaces,
      scopes: invite.workspace_api_key_details?.scopes ?? null,
    };
  }

  private async find(manager: EntityManager, principal: Principal, inviteId: string) {
    const invite = await manager
      .getRepository(InviteEntity)
      .findOne({ where: { organisation_id: principal.organisationId, id: inviteId } });
    if (!invite) throw IdentityErrors.inviteNotFound(inviteId);
    return invite;
  }

  private withToken(invite: InviteEntity, token: string) {
    const base = this.config.publicUrl ?? `http://${this.config.host}:${this.config.port}`;
    return {
      ...toInviteResponse(invite),
      token,
      invite_link: `${base}/v1/invites/accept?token=${token}`,
    };
  }
}
