import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In } from 'typeorm';
import { DomainEvents, Principal, listEnvelope, toPage } from '@switchboard/common';
import { UserEntity } from './entities/user.entity';
import { WorkspaceMemberEntity } from './entities/workspace-member.entity';
import { ListUsersQueryDto, UpdateUserDto } from './dto/user.dto';
import { IdentityErrors } from './identity.errors';
import { toUserResponse } from './identity.mapper';

@Injectable()
export class UsersService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly events: DomainEvents,
  ) {}

  async list(principal: Principal, query: ListUsersQueryDto) {
    const { skip, take } = toPage(query);
    const builder = this.dataSource
      .getRepository(UserEntity)
      .createQueryBuilder('user')
      .where('user.organisation_id = :organisationId', { organisationId: principal.organisationId });
    if (query.role) builder.andWhere('user.role = :role', { role: query.role });
    if (query.email) builder.andWhere('user.email LIKE :email', { email: `%${query.email.toLowerCase()}%` });
    const [users, total] = await builder
      .orderBy('user.created_at', 'ASC')
      .addOrderBy('user.id', 'ASC')
      .skip(skip)
      .take(take)
      .getManyAndCount();
    const workspaceIds = await this.workspaceIdsOf(users.map((user) => user.id));
    return listEnvelope(
      users.map((user) => toUserResponse(user, workspaceIds.get(user.id) ?? [])),
      total,
    );
  }

  async get(principal: Principal, userId: string) {
    const user = await this.find(this.dataSource.manager, principal, userId);
    const workspaceIds = await this.workspaceIdsOf([user.id]);
    return toUserResponse(user, workspaceIds.get(user.id) ?? []);
  }

  async update(principal: Principal, userId: string, dto: UpdateUserDto) {
    return this.dataSource.transaction(async (manager) => {
      const user = await this.find(manager, principal, userId);
      if (dto.role !== undefined && dto.role !== user.role) {
        if ((dto.role === 'owner' || user.role === 'owner') && principal.user?.role !== 'owner') {
          throw IdentityErrors.ownerOnly();
        }
        if (user.role === 'owner') await this.assertAnotherOwner(manager, principal.organisationId, user.id);
        user.role = dto.role;
      }
      if (dto.first_name !== undefined) user.first_name = dto.first_name;
      if (dto.last_name !== undefined) user.last_name = dto.last_name;
      await manager.getRepository(UserEntity).save(user);
      await this.events.emit('principals.changed', { reason: 'user role' });
      const workspaceIds = await this.workspaceIdsOf([user.id], manager);
      return toUserResponse(user, workspaceIds.get(user.id) ?? []);
    });
  }

  /** Removes the user, their memberships and their keys, all or nothing. */
  async remove(principal: Principal, userId: string) {
    return this.dataSource.transaction(async (manager) => {
      const user = await this.find(manager, principal, userId);
      if (user.role === 'owner') {
        if (principal.user?.role !== 'owner') throw IdentityErrors.ownerOnly();
        await this.assertAnotherOwner(manager, principal.organisationId, user.id);
      }
      await manager.getRepository(WorkspaceMemberEntity).delete({ user_id: user.id });
      await this.events.emit('user.deleted', {
        manager,
        organisationId: principal.organisationId,
        userId: user.id,
      });
      await manager.getRepository(UserEntity).delete({ id: user.id });
      await this.events.emit('principals.changed', { reason: 'user deleted' });
      return { object: 'user' as const, id: user.id, deleted: true };
    });
  }

  async findById(organisationId: string, userId: string, manager: EntityManager = this.dataSource.manager) {
    return manager
      .getRepository(UserEntity)
      .findOne({ where: { organisation_id: organisationId, id: userId } });
  }

  private async find(manager: EntityManager, principal: Principal, userId: string): Promise<UserEntity> {
    const user = await this.findById(principal.organisationId, userId, manager);
    if (!user) throw IdentityErrors.userNotFound(userId);
    return user;
  }

  private async assertAnotherOwner(manager: EntityManager, organisationId: string, userId: string) {
    const owners = await manager
      .getRepository(UserEntity)
      .find({ where: { organisation_id: organisationId, role: 'owner' } });
    if (!owners.some((owner) => owner.id !== userId)) throw IdentityErrors.lastOwner();
  }

  private async workspaceIdsOf(userIds: string[], manager: EntityManager = this.dataSource.manager) {
    const result = new Map<string, string[]>();
    if (userIds.length === 0) return result;
    const memberships = await manager
      .getRepository(WorkspaceMemberEntity)
      .find({ where: { user_id: In(userIds) }, order: { created_at: 'ASC' } });
    for (const membership of memberships) {
      const list = result.get(membership.user_id) ?? [];
      list.push(membership.workspace_id);
      result.set(membership.user_id, list);
    }
    return result;
  }
}
