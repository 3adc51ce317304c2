// MCP progress notifications for writes: when the caller sent a progressToken, each write step
// (sent -> receipt -> indexed) becomes a notifications/progress message.
import type { ProgressReporter } from '../src/service/index.ts';

interface RequestExtra {
  _meta?: { progressToken?: string | number };
  sendNotification: (notification: {
    method: 'notifications/progress';
    params: { progressToken: string | number; progress: number; total: number; message: string };
  }) => Promise<void>;
}

export function progressReporter(extra: unknown): ProgressReporter | undefined {
  const { _meta, sendNotification } = extra as RequestExtra;
  const token = _meta?.progressToken;
  if (token === undefined) return undefined;
  return (_step, progress, total, message) => {
    sendNotification({
      method: 'notifications/progress',
      params: { progressToken: token, progress, total, message },
    }).catch(() => {});
  };
}
