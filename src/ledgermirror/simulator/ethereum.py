"""Ethereum transactions: accounts with an ECDSA secp256k1 key and its EVM address alias, and EIP-1559
transactions calling a contract through a relay that pays the HAPI fee. The signatures ``r``/``s`` are
random bytes: ECDSA signing is randomized and would break the byte-for-byte determinism, and no importer
verifies them.
"""

from __future__ import annotations

from ledgermirror.simulator import contracts, crypto, picks
from ledgermirror.simulator.emitter import Emitter, Tx
from ledgermirror.simulator.evm import RlpItem, ecdsa_key, keccak256, rlp
from ledgermirror.simulator.picks import HBAR

CHAIN_ID = 298
"""The chain id of a local Hedera network."""
EIP_1559 = 2
_GAS_LIMIT = 400_000
_TINYBARS_PER_WEIBAR = 10_000_000_000


def create_ecdsa_account(em: Emitter) -> bool:
    """An account keyed by a secp256k1 key with its EVM address as alias (what wallets and relays use),
    funded by a payer that holds its initial balance and fee (else none is created)."""
    payer = picks.payer(em, 500 * HBAR)
    if payer is None:
        return False
    compressed, address = ecdsa_key(em.rng)
    key = b"\x3a\x21" + compressed  # Key.ECDSA_secp256k1 (field 7), 33 bytes
    initial = em.rng.randrange(100, 5000) * HBAR
    body = em.hapi.bodies["crypto_create"].CryptoCreateTransactionBody(
        key=picks.key_message(em, key), initialBalance=initial, alias=address, memo="evm wallet"
    )
    body.autoRenewPeriod.seconds = crypto.AUTO_RENEW_SECONDS
    fee = picks.fee(em, "cryptoCreateAccount")
    if em.ledger.balance(payer) < initial + fee:  # the network would refuse it (INSUFFICIENT_PAYER_BALANCE)
        return False
    num = em.ledger.new_num()
    record = em.new_record()
    record.receipt.accountID.accountNum = num
    record.evm_address = address
    stamp = em.emit(Tx(payer, "cryptoCreateAccount", body, fee, hbar={payer: -initial, num: initial}), record)
    account = picks.add_user(em, num, key, stamp, memo="evm wallet", alias=address)
    account.evm_address = address
    account.pinned = True
    em.ledger.ecdsa_accounts.append(account)
    return True


def ethereum_call(em: Emitter) -> bool:
    """A relay submits an EIP-1559 transaction of an ECDSA account calling a contract; the record carries
    the call result with the signer and its next nonce, and the Ethereum hash."""
    ledger = em.ledger
    sender = picks.sample(em, ledger.ecdsa_accounts, lambda a: not a.deleted)
    contract = picks.sample(em, ledger.contract_list, lambda c: not c.deleted)
    relay = picks.payer(em, 100 * HBAR, exclude=(sender.num,) if sender else ())
    if sender is None or contract is None or relay is None or not em.sidecars_allowed:
        return False
    data = bytes.fromhex("6057361d") + em.rng.randbytes(32)
    fields: list[RlpItem] = [
        CHAIN_ID,
        sender.ethereum_nonce,
        em.rng.randrange(1, 100) * _TINYBARS_PER_WEIBAR,
        em.rng.randrange(100, 1000) * _TINYBARS_PER_WEIBAR,
        _GAS_LIMIT,
        contract.num.to_bytes(20, "big"),
        0,
        data,
        [],
        em.rng.randrange(2),
        em.rng.randbytes(32),
        em.rng.randbytes(32),
    ]
    ethereum_data = bytes((EIP_1559,)) + rlp(fields)
    body = em.hapi.bodies["ethereum_transaction"].EthereumTransactionBody(
        ethereum_data=ethereum_data, max_gas_allowance=5 * HBAR
    )
    record = em.new_record()
    record.ethereum_hash = keccak256(ethereum_data)
    record.receipt.contractID.contractNum = contract.num
    sidecars = contracts.fill_call_result(
        em, record.contractCallResult, contract, sender=sender.num, parameters=data, gas=_GAS_LIMIT
    )
    record.contractCallResult.signer_nonce.value = sender.ethereum_nonce + 1
    em.emit(
        Tx(relay, "ethereumTransaction", body, picks.fee(em, "ethereumTransaction"), sidecars=sidecars), record
    )
    sender.ethereum_nonce += 1
    return True
