import { eventually, type RpcClient } from './helpers.js';

/** Waits until `channels.list` shows the platform `type` connected (its inbound side is up). */
export function channelConnected(rpc: RpcClient, type: string): Promise<true> {
  return eventually(async () => {
    const list = await rpc.call<{ channels: Array<{ type: string; status: string }> }>('channels.list');
    return list.channels.some((row) => row.type === type && row.status === 'connected') ? true : undefined;
  });
}

export { signedSlackPost } from '../../../packages/channels/test/fixtures.js';

/**
 * A Telegram text message from user `fromId` in chat `chatId` (a negative id is a group, as
 * Telegram numbers them), for `pushUpdate`/`postUpdate` of the fake Bot API.
 */
export function telegramMessage(messageId: number, chatId: number, fromId: number, text: string) {
  return {
    message_id: messageId,
    date: 1,
    chat: { id: chatId, type: chatId < 0 ? 'group' : 'private' },
    from: { id: fromId, is_bot: false, first_name: 'someone' },
    text,
  };
}
