"""Hooks (HIP-1195): accounts created with an EVM allowance hook (a live contract's code, initial storage
slots), HookStore transactions that write or clear slots of a hook's storage, and hooks deleted by their
owner's CryptoUpdate."""

from __future__ import annotations

from ledgermirror.simulator import picks
from ledgermirror.simulator.crypto import AUTO_RENEW_SECONDS
from ledgermirror.simulator.emitter import Emitter, Tx
from ledgermirror.simulator.ledger_state import Hook
from ledgermirror.simulator.picks import HBAR

ACCOUNT_ALLOWANCE_HOOK = 0
WORD = 32


def _slot(em: Emitter) -> bytes:
    """A slot key (32 bytes): one of a few, so slots get rewritten and cleared."""
    return em.rng.randrange(1, 6).to_bytes(WORD, "big")


def create_hooked_account(em: Emitter) -> bool:
    """A new account with hook 1: a contract's code and one or two storage slots written at creation."""
    ledger = em.ledger
    payer = picks.payer(em, 500 * HBAR)
    contract = picks.sample(em, ledger.contract_list, lambda c: not c.deleted)
    if payer is None or contract is None:
        return False
    key = picks.ed25519_key(em)
    initial = ledger.balance(payer) // em.rng.randrange(20, 60)
    body = em.hapi.bodies["crypto_create"].CryptoCreateTransactionBody(
        key=picks.key_message(em, key), initialBalance=initial, memo="hooked account"
    )
    body.autoRenewPeriod.seconds = AUTO_RENEW_SECONDS
    details = body.hook_creation_details.add(extension_point=ACCOUNT_ALLOWANCE_HOOK, hook_id=1)
    details.evm_hook.spec.contract_id.contractNum = contract.num
    num = ledger.new_num()
    hook = Hook(num, 1, contract.num, 0)
    for slot in sorted({_slot(em) for _ in range(em.rng.choice((1, 2)))}):  # distinct slots
        value = em.rng.randrange(1, 1 << 64).to_bytes(WORD, "big")
        details.evm_hook.storage_updates.add().storage_slot.CopyFrom(
            em.hapi.bodies["hook_types"].EvmHookStorageSlot(key=slot, value=value.lstrip(b"\0"))
        )
        hook.storage[slot] = value
    record = em.new_record()
    record.receipt.accountID.accountNum = num
    fee = picks.fee(em, "cryptoCreateAccount")
    stamp = em.emit(Tx(payer, "cryptoCreateAccount", body, fee, hbar={payer: -initial, num: initial}), record)
    account = picks.add_user(em, num, key, stamp, memo=body.memo)
    account.pinned = True
    hook.created_timestamp = stamp
    ledger.hooks[(num, 1)] = hook
    ledger.hook_list.append(hook)
    return True


def delete_hook(em: Emitter) -> bool:
    """The owner deletes its hook (a CryptoUpdate listing it in ``hook_ids_to_delete``)."""
    ledger = em.ledger
    hook = picks.sample(em, ledger.hook_list, lambda h: not h.deleted and ledger.balance(h.owner) >= 10 * HBAR)
    if hook is None:
        return False
    body = em.hapi.bodies["crypto_update"].CryptoUpdateTransactionBody(
        accountIDToUpdate=em.account_id(hook.owner), hook_ids_to_delete=[hook.hook_id]
    )
    em.emit(Tx(hook.owner, "cryptoUpdateAccount", body, picks.fee(em, "cryptoUpdateAccount")))
    hook.deleted = True
    return True


def hook_store(em: Emitter) -> bool:
    """The owner writes a slot of its hook's storage, or (one time in four) clears one."""
    ledger = em.ledger
    hook = picks.sample(em, ledger.hook_list, lambda h: not h.deleted and ledger.balance(h.owner) >= 10 * HBAR)
    if hook is None:
        return False
    slot = _slot(em)
    clear = slot in hook.storage and em.rng.random() < 0.25
    value = b"" if clear else em.rng.randrange(1, 1 << 64).to_bytes(WORD, "big")
    body = em.hapi.bodies["hook_store"].HookStoreTransactionBody()
    body.hook_id.entity_id.account_id.accountNum = hook.owner
    body.hook_id.hook_id = hook.hook_id
    body.storage_updates.add().storage_slot.CopyFrom(
        em.hapi.bodies["hook_types"].EvmHookStorageSlot(key=slot, value=value.lstrip(b"\0"))
    )
    em.emit(Tx(hook.owner, "hook_store", body, picks.fee(em, "hookStore")))
    if clear:
        del hook.storage[slot]
    else:
        hook.storage[slot] = value
    return True
