import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, In } from 'typeorm';
import { DomainEvents, Principal, WorkspaceRole, listEnvelope, toPage } from '@switchboard/common';
import { UserEntity } from './entities/user.entity';
import { WorkspaceMemberEntity } from './entities/workspace-member.entity';
import { AddMembersDto, ListMembersQueryDto, UpdateMemberDto } from './dto/workspace.dto';
import { IdentityErrors } from './identity.errors';
import { toMemberResponse } from './identity.mapper';
import { WorkspacesService } from './workspaces.service';

@Injectable()
export class MembersService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly workspaces: WorkspacesService,
    private readonly events: DomainEvents,
  ) {}

  /** Workspace managers run their workspace but cannot mint workspace admins. */
  private assertCanGrant(principal: Principal, role: WorkspaceRole): void {
    if (role === 'admin' && !principal.organisationWide && principal.workspaceRole !== 'admin') {
      throw IdentityErrors.roleNotGrantable(role);
    }
  }

  async add(principal: Principal, workspaceIdOrSlug: string, dto: AddMembersDto) {
    return this.dataSource.transaction(async (manager) => {
      const workspace = await this.workspaces.findVisible(principal, workspaceIdOrSlug, manager);
      if (workspace.status === 'archived') throw IdentityErrors.workspaceArchived(workspaceIdOrSlug);
      const ids = dto.users.map((item) => item.id);
      if (new Set(ids).size !== ids.length)
        throw IdentityErrors.memberExists(ids.find((id, i) => ids.indexOf(id) !== i)!);
      dto.users.forEach((item) => this.assertCanGrant(principal, item.role));
      const users = await manager
        .getRepository(UserEntity)
        .find({ where: { organisation_id: principal.organisationId, id: In(ids) } });
      const missing = ids.find((id) => !users.some((user) => user.id === id));
      if (missing) throw IdentityErrors.userNotFound(missing);
      const existing = await manager
        .getRepository(WorkspaceMemberEntity)
        .find({ where: { workspace_id: workspace.id, user_id: In(ids) } });
      if (existing.length > 0) throw IdentityErrors.memberExists(existing[0].user_id);
      await manager.getRepository(WorkspaceMemberEntity).insert(
        dto.users.map((item) => ({
          id: randomUUID(),
          organisation_id: principal.organisationId,
          workspace_id: workspace.id,
          user_id: item.id,
          role: item.role,
        })),
      );
      await this.events.emit('principals.changed', { reason: 'members added' });
      return { object: 'workspace-members' as const, workspace_id: workspace.id, added: ids.length };
    });
  }

  async list(principal: Principal, workspaceIdOrSlug: string, query: ListMembersQueryDto) {
    const workspace = await this.workspaces.findVisible(principal, workspaceIdOrSlug);
    const { skip, take } = toPage(query);
    const builder = this.dataSource
      .getRepository(WorkspaceMemberEntity)
      .createQueryBuilder('member')
      .innerJoin(UserEntity, 'user', 'user.id = member.user_id')
      .where('member.workspace_id = :workspaceId', { workspaceId: workspace.id });
    if (query.role) builder.andWhere('member.role = :role', { role: query.role });
    if (query.email) builder.andWhere('user.email LIKE :email', { email: `%${query.email.toLowerCase()}%` });
    const total = await builder.getCount();
    const members = await builder
      .orderBy('member.created_at', 'ASC')
      .addOrderBy('member.id', 'ASC')
      .skip(skip)
      .take(take)
      .getMany();
    const users = await this.dataSource
      .getRepository(UserEntity)
      .find({ where: { id: In(members.map((member) => member.user_id)) } });
    const byId = new Map(users.map((user) => [user.id, user]));
    return listEnvelope(
      members.map((member) => toMemberResponse(member, byId.get(member.user_id)!)),
      total,
    );
  }

  async get(principal: Principal, workspaceIdOrSlug: string, userId: string) {
    const workspace = await this.workspaces.findVisible(principal, workspaceIdOrSlug);
    const member = await this.dataSource
      .getRepository(WorkspaceMemberEntity)
      .findOne({ where: { workspace_id: workspace.id, user_id: userId } });
    if (!member) throw IdentityErrors.memberNotFound(userId);
    const user = await this.dataSource.getRepository(UserEntity).findOneByOrFail({ id: userId });
    return toMemberResponse(member, user);
  }

  async update(principal: Principal, workspaceIdOrSlug: string, userId: string, dto: UpdateMemberDto) {
    return this.dataSource.transaction(async (manager) => {
      const workspace = await this.workspaces.findVisible(principal, workspaceIdOrSlug, manager);
      const repository = manager.getRepository(WorkspaceMemberEntity);
      const member = await repository.findOne({ where: { workspace_id: workspace.id, user_id: userId } });
      if (!member) throw IdentityErrors.memberNotFound(userId);
      this.assertCanGrant(principal, dto.role);
      if (member.role === 'admin') this.assertCanGrant(principal, 'admin');
      member.role = dto.role;
      await repository.save(member);
      await this.events.emit('principals.changed', { reason: 'member role' });
      const user = await manager.getRepository(UserEntity).findOneByOrFail({ id: userId });
      return toMemberResponse(member, user);
    });
  }

  async remove(principal: Principal, workspaceIdOrSlug: string, userId: string) {
    return this.dataSource.transaction(async (manager) => {
      const workspace = await this.workspaces.findVisible(principal, workspaceIdOrSlug, manager);
      const repository = manager.getRepository(WorkspaceMemberEntity);
      const member = await repository.findOne({ where: { workspace_id: workspace.id, user_id: userId } });
      if (!member) throw IdentityErrors.memberNotFound(userId);
      if (member.role === 'admin') this.assertCanGrant(principal, 'admin');
      await repository.delete({ id: member.id });
      await this.events.emit('member.removed', { manager, workspaceId: workspace.id, userId });
      await this.events.emit('principals.changed', { reason: 'member removed' });
      return { object: 'workspace-member' as const, id: userId, deleted: true };
    });
  }

  /** Role of `userId` in a workspace, or null. */
  async roleOf(workspaceId: string, userId: string): Promise<WorkspaceRole | null> {
    const member = await this.dataSource
      .getRepository(WorkspaceMemberEntity)
      .findOne({ where: { workspace_id: workspaceId, user_id: userId } });
    return member?.role ?? null;
  }
}
