"""``truth.json``: what the simulated network holds at the end, as the REST API must answer after import.

Entity ids are ``0.0.N`` strings, amounts integers (tinybars or token units), timestamps integer nanoseconds,
bytes lowercase hex. ``docs/importer.md`` (section "The simulator") describes every key.
"""

from __future__ import annotations

import hashlib
from typing import Any

from ledgermirror.simulator.emitter import Emitter
from ledgermirror.simulator.hapi import entity
from ledgermirror.simulator.ledger_state import FEE_COLLECTOR, INITIAL_SUPPLY, Ledger

FORMAT_VERSION = 1


def truth(em: Emitter, network: dict[str, Any], files: dict[str, Any], genesis: dict[int, int]) -> dict[str, Any]:
    ledger = em.ledger
    document = _truth(em, network, files, genesis)
    if ledger.evm_tokens:
        document["evm_tokens"] = _evm_tokens(ledger)
    return document


def _truth(em: Emitter, network: dict[str, Any], files: dict[str, Any], genesis: dict[int, int]) -> dict[str, Any]:
    ledger = em.ledger
    return {
        "format": FORMAT_VERSION,
        "network": network,
        "record_files": files,
        "initial_supply": INITIAL_SUPPLY,
        "initial_balances": {entity(num): balance for num, balance in genesis.items()},
        "fee_collector": entity(FEE_COLLECTOR),
        "transactions": {
            "count": em.transactions,
            "by_type": dict(sorted(em.types.items())),
            "by_result": dict(sorted(em.results.items())),
        },
        "balances": {entity(num): ledger.balances[num] for num in sorted(ledger.balances)},
        "accounts": _accounts(ledger),
        "tokens": _tokens(ledger),
        "token_balances": {
            entity(token.num): {entity(a): token.balances[a] for a in sorted(token.balances)}
            for token in ledger.tokens.values()
        },
        "nfts": _nfts(ledger),
        "topics": {
            entity(t.num): {
                "memo": t.memo,
                "created_timestamp": t.created_timestamp,
                "admin_key": t.admin_key.hex() if t.admin_key else None,
                "submit_key": t.submit_key.hex() if t.submit_key else None,
                "auto_renew_account": entity(t.auto_renew_account) if t.auto_renew_account else None,
                "messages": t.sequence_number,
                "sequence_number": t.sequence_number,
                "running_hash": t.running_hash.hex(),
                "last_message_timestamp": t.last_message_timestamp,
                "deleted": t.deleted,
                "chunks": t.chunks,
            }
            for t in ledger.topics.values()
        },
        "schedules": {
            entity(s.num): {
                "creator": entity(s.creator),
                "payer": entity(s.payer),
                "memo": s.memo,
                "created_timestamp": s.created_timestamp,
                "executed_timestamp": s.executed_timestamp,
                "executed_result": s.executed_result,
                "deleted_timestamp": s.deleted_timestamp,
                "signers": [entity(a) for a in s.signers],
                "admin_key": s.admin_key.hex(),
                "transaction_body": s.transaction_body.hex(),
                "signatures": [{"public_key_prefix": p.hex(), "signature": g.hex()} for p, g in s.signatures],
                "transfer": {"from": entity(s.sender), "to": entity(s.receiver), "amount": s.amount},
            }
            for s in ledger.schedules.values()
        },
        "contracts": {
            entity(c.num): {
                "created_timestamp": c.created_timestamp,
                "creator": entity(c.creator),
                "initcode": c.initcode.hex(),
                "runtime_bytecode": c.runtime_bytecode.hex(),
                "calls": c.calls,
                "storage": {slot.hex(): value.hex() for slot, value in sorted(c.storage.items())},
                "memo": c.memo,
                "deleted": c.deleted,
                "obtainer": entity(c.obtainer) if c.obtainer is not None else None,
            }
            for c in ledger.contracts.values()
        },
        "allowances": _allowances(ledger),
        "airdrops": [
            {"sender": entity(s), "receiver": entity(r), "token": entity(t), "amount": amount, "state": state}
            for (s, r, t), (amount, state) in sorted(ledger.airdrops.items())
        ],
        "nft_airdrops": [
            {"sender": entity(s), "receiver": entity(r), "token": entity(t), "serial": serial, "state": state}
            for (s, r, t, serial), state in sorted(ledger.nft_airdrops.items())
        ],
        "token_statuses": _token_statuses(ledger),
        "nodes": {
            str(n.node_id): {
                "account": entity(n.account),
                "admin_key": n.admin_key.hex(),
                "created_timestamp": n.created_timestamp,
                "description": n.description,
                "decline_reward": n.decline_reward,
                "deleted": n.deleted,
            }
            for n in sorted(ledger.nodes.values(), key=lambda node: node.node_id)
        },
        "user_files": {
            entity(f.num): {
                "size": len(f.contents),
                "sha384": hashlib.sha384(f.contents).hexdigest(),
                "created_timestamp": f.created_timestamp,
                "deleted": f.deleted,
            }
            for f in ledger.user_files.values()
        },
        "freezes": ledger.freezes,
        "hooks": [
            {
                "owner": entity(h.owner),
                "hook_id": h.hook_id,
                "contract": entity(h.contract),
                "created_timestamp": h.created_timestamp,
                "deleted": h.deleted,
                "storage": {slot.hex(): value.hex() for slot, value in sorted(h.storage.items())},
            }
            for h in ledger.hook_list
        ],
        "atomic_batches": ledger.batches,
        "staking_rewards": {entity(num): amount for num, amount in sorted(ledger.staking_rewards.items())},
        "files": {
            entity(num): {"size": len(data), "sha384": hashlib.sha384(data).hexdigest()}
            for num, data in sorted(ledger.files.items())
        },
        "address_book": _address_book(em),
        "exchange_rate": _exchange_rate(em),
    }


def _address_book(em: Emitter) -> list[dict[str, Any]]:
    """The book of 0.0.102 at the end (what ``/network/nodes`` lists)."""
    book = em.hapi.basic.NodeAddressBook.FromString(em.ledger.files.get(102, b""))
    return [
        {
            "node_id": entry.nodeId,
            "account": entity(entry.nodeAccountId.accountNum),
            "description": entry.description,
            "public_key": entry.RSA_PubKey,
            "node_cert_hash": bytes(entry.nodeCertHash).decode(),
            "service_endpoints": [
                {
                    "ip_address_v4": ".".join(str(b) for b in endpoint.ipAddressV4)
                    if endpoint.ipAddressV4
                    else "",
                    "domain_name": endpoint.domain_name,
                    "port": endpoint.port,
                }
                for endpoint in entry.serviceEndpoint
            ],
        }
        for entry in book.nodeAddress
    ]


def _exchange_rate(em: Emitter) -> dict[str, Any]:
    """The rates of 0.0.112 at the end (what ``/network/exchangerate`` answers)."""
    rates = em.hapi.exchange_rate.ExchangeRateSet.FromString(em.ledger.files.get(112, b""))
    return {
        name: {
            "cent_equivalent": rate.centEquiv,
            "hbar_equivalent": rate.hbarEquiv,
            "expiration_time": rate.expirationTime.seconds,
        }
        for name, rate in (("current_rate", rates.currentRate), ("next_rate", rates.nextRate))
    }


def _accounts(ledger: Ledger) -> dict[str, Any]:
    return {
        entity(a.num): {
            "balance": ledger.balance(a.num),
            "created_timestamp": a.created_timestamp,
            "deleted": a.deleted,
            "obtainer": entity(a.obtainer) if a.obtainer is not None else None,
            "memo": a.memo,
            "key": a.key.hex(),
            "alias": a.alias.hex() if a.alias else None,
            "max_automatic_token_associations": a.max_automatic_token_associations,
            "staked_node_id": a.staked_node_id,
            "decline_reward": a.decline_reward,
            "evm_address": a.evm_address.hex() if a.evm_address else None,
            "ethereum_nonce": a.ethereum_nonce,
        }
        for a in sorted(ledger.accounts.values(), key=lambda account: account.num)
    }


def _tokens(ledger: Ledger) -> dict[str, Any]:
    return {
        entity(t.num): {
            "type": "FUNGIBLE_COMMON" if t.fungible else "NON_FUNGIBLE_UNIQUE",
            "name": t.name,
            "symbol": t.symbol,
            "decimals": t.decimals,
            "memo": t.memo,
            "treasury": entity(t.treasury),
            "initial_supply": t.initial_supply,
            "total_supply": t.total_supply,
            "max_supply": t.max_supply,
            "supply_type": "FINITE" if t.max_supply else "INFINITE",
            "created_timestamp": t.created_timestamp,
            "deleted": t.deleted,
            "regulated": t.regulated,
            "pause_status": ("PAUSED" if t.paused else "UNPAUSED") if t.regulated else "NOT_APPLICABLE",
            "royalty_fees": [
                {
                    "collector": entity(t.royalty.collector),
                    "numerator": t.royalty.numerator,
                    "denominator": t.royalty.denominator,
                    "fallback_amount": t.royalty.fallback,
                }
            ]
            if t.royalty is not None
            else [],
            "custom_fees": [
                {
                    "collector": entity(fee.collector),
                    "amount": fee.amount,
                    "denominating_token": entity(t.num) if fee.denominated_in_token else None,
                }
                for fee in t.custom_fees
            ],
        }
        for t in ledger.tokens.values()
    }


def _nfts(ledger: Ledger) -> dict[str, Any]:
    return {
        entity(t.num): {
            str(serial): {
                "owner": entity(nft.owner) if nft.owner is not None else None,
                "metadata": nft.metadata.hex(),
                "created_timestamp": nft.created_timestamp,
                "deleted": nft.deleted,
                "spender": entity(nft.spender) if nft.spender is not None else None,
            }
            for serial, nft in sorted(t.nfts.items())
        }
        for t in ledger.tokens.values()
        if not t.fungible
    }


def _allowances(ledger: Ledger) -> dict[str, Any]:
    return {
        "crypto": [
            {"owner": entity(o), "spender": entity(s), "amount_granted": v[0], "amount": v[1]}
            for (o, s), v in sorted(ledger.crypto_allowances.items())
        ],
        "token": [
            {"owner": entity(o), "spender": entity(s), "token": entity(t), "amount_granted": v[0], "amount": v[1]}
            for (o, s, t), v in sorted(ledger.token_allowances.items())
        ],
        "nft": [
            {"owner": entity(o), "spender": entity(s), "token": entity(t), "approved_for_all": v}
            for (o, s, t), v in sorted(ledger.nft_allowances.items())
        ],
    }


def _token_statuses(ledger: Ledger) -> dict[str, Any]:
    """token → account → ``freeze_status`` and ``kyc_status`` (1 FROZEN / GRANTED, 2 UNFROZEN / REVOKED) of
    the relationships whose status the stream set: the treasury of a regulated token at creation, then
    freezes, unfreezes, KYC grants and revokes. Plain associations leave both NULL."""
    return {
        entity(t.num): {
            entity(a): {"freeze_status": t.freeze_status.get(a), "kyc_status": t.kyc_status.get(a)}
            for a in sorted(set(t.freeze_status) | set(t.kyc_status))
        }
        for t in ledger.tokens.values()
        if t.freeze_status or t.kyc_status
    }


def _evm_tokens(ledger: Ledger) -> dict[str, Any]:
    """Contract → what its views answer at the end, and the changes (in order) that led there."""
    return {
        entity(t.contract.num): {
            "kind": t.kind,
            "name": t.name,
            "symbol": t.symbol,
            "total_supply": t.total_supply,
            "balances": {entity(a): t.balances[a] for a in sorted(t.balances)},
            "owners": {str(i): entity(t.owners[i]) for i in sorted(t.owners)},
            "token_uris": {str(i): t.uris[i] for i in sorted(t.uris)},
            "approved": {str(i): entity(t.approved[i]) for i in sorted(t.approved)},
            "events": [_event(event) for event in t.events],
        }
        for t in ledger.evm_tokens
    }


def _event(event: dict[str, Any]) -> dict[str, Any]:
    """Entity numbers as ``0.0.N``; a mint's ``from`` stays None."""
    return {
        key: entity(value) if key in {"from", "to", "owner", "token", "approved"} and value is not None else value
        for key, value in event.items()
    }
