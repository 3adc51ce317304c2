// The devnet's funded accounts: the first accounts of the standard test mnemonic, the same keys anvil and
// Hardhat print, so every Ethereum developer recognises them. Test keys only: never use them elsewhere.
import { bytesToHex, type Address, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { defined } from '../defined.ts';

export const DEV_MNEMONIC = 'test test test test test test test test test test test junk';
export const DEV_ACCOUNT_COUNT = 10;
/** 10,000 ETH each, as anvil does. */
export const DEV_ACCOUNT_BALANCE = 10_000n * 10n ** 18n;

export interface DevAccount {
  address: Address;
  privateKey: Hex;
}

export function devAccounts(count = DEV_ACCOUNT_COUNT, mnemonic = DEV_MNEMONIC): DevAccount[] {
  return Array.from({ length: count }, (_, addressIndex) => {
    const account = mnemonicToAccount(mnemonic, { addressIndex });
    return {
      address: account.address,
      privateKey: bytesToHex(defined(account.getHdKey().privateKey, `private key of dev account ${addressIndex}`)),
    };
  });
}
