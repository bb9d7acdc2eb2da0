import { AppError } from '@switchboard/common';

export const ObservabilityErrors = {
  logNotFound: (id: string) => new AppError(404, 'log_not_found', `Log '${id}' was not found`, 'logId'),
  tooManyLogs: (max: number) =>
    new AppError(400, 'too_many_logs', `At most ${max} logs can be inserted per request`, null),
  emptyLogs: () =>
    new AppError(400, 'invalid_request', 'Send one log object or a non-empty array of them', null),
};
