import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsEmail,
  IsIn,
  IsOptional,
  IsString,
  MaxLength,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { PageQueryDto } from '@switchboard/common';

export class ListUsersQueryDto extends PageQueryDto {
  @IsOptional()
  @IsIn(['owner', 'admin', 'member'])
  role?: 'owner' | 'admin' | 'member';

  @IsOptional()
  @IsString()
  @MaxLength(320)
  email?: string;
}

export class UpdateUserDto {
  @IsOptional()
  @IsIn(['owner', 'admin', 'member'])
  role?: 'owner' | 'admin' | 'member';

  @IsOptional()
  @IsString()
  @MaxLength(255)
  first_name?: string;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  last_name?: string;
}

export class InviteWorkspaceDto {
  /** Workspace id or slug. */
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  id: string;

  @IsIn(['admin', 'manager', 'member'])
  role: 'admin' | 'manager' | 'member';
}

export class InviteKeyDetailsDto {
  @IsArray()
  @ArrayMaxSize(200)
  @IsString({ each: true })
  scopes: string[];
}

export class CreateInviteDto {
  @IsEmail()
  @MaxLength(320)
  email: string;

  @IsIn(['admin', 'member'])
  role: 'admin' | 'member';

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => InviteWorkspaceDto)
  workspaces?: InviteWorkspaceDto[];

  @IsOptional()
  @ValidateNested()
  @Type(() => InviteKeyDetailsDto)
  workspace_api_key_details?: InviteKeyDetailsDto;
}

export class ListInvitesQueryDto extends PageQueryDto {
  @IsOptional()
  @IsIn(['admin', 'member'])
  role?: 'admin' | 'member';

  @IsOptional()
  @IsString()
  @MaxLength(320)
  email?: string;

  @IsOptional()
  @IsIn(['pending', 'cancelled', 'accepted', 'expired'])
  status?: 'pending' | 'cancelled' | 'accepted' | 'expired';
}

export class AcceptInviteDto {
  @IsString()
  @MinLength(20)
  @MaxLength(200)
  token: string;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  first_name?: string;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  last_name?: string;
}
