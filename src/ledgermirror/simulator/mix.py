"""What each slot of the simulated network does: scripted system work first (bootstrap, then address book,
fee schedule and exchange rate updates at their times), then a tour that runs every kind of transaction
once, then a weighted random mix (mostly hbar transfers). A kind whose preconditions do not hold in the
current state (no NFT to move yet, ...) falls back to an hbar transfer."""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable

from ledgermirror.simulator import (
    airdrops,
    batches,
    contracts,
    crypto,
    ethereum,
    evm_tokens,
    governance,
    hooks,
    services,
    token_admin,
    token_changes,
    tokens,
    tour,
)
from ledgermirror.simulator.emitter import Emitter

Generator = Callable[[Emitter], bool]

WEIGHTS: tuple[tuple[str, int, Generator], ...] = (
    ("crypto transfer", 500, crypto.transfer),
    ("failed transfer", 30, crypto.failed_transfer),
    ("approved transfer", 10, crypto.approved_transfer),
    ("transfer to new alias", 8, crypto.transfer_to_alias),
    ("account create", 25, crypto.create_account),
    ("account update", 10, crypto.update_account),
    ("account delete", 4, crypto.delete_account),
    ("approve allowance", 12, crypto.approve_allowance),
    ("delete NFT allowance", 3, crypto.delete_nft_allowance),
    ("fungible token create", 4, functools.partial(tour.create, fungible=True)),
    ("fungible token create with fees", 0, functools.partial(tour.create, fungible=True, with_fees=True)),
    (
        "fungible token create without fees",
        0,
        functools.partial(tour.create, fungible=True, with_fees=False),
    ),
    ("NFT class create", 3, functools.partial(tour.create, fungible=False)),
    ("plain NFT class create", 0, functools.partial(tour.create, fungible=False, regulated=False, royalty=False)),
    ("token associate", 30, tokens.associate),
    ("fungible mint", 8, functools.partial(tokens.mint, fungible=True)),
    ("NFT mint", 15, functools.partial(tokens.mint, fungible=False)),
    ("fungible burn", 4, tokens.burn),
    ("fungible token transfer", 100, tokens.transfer_fungible),
    ("fee-paying token transfer", 0, tokens.fee_paying_transfer),
    ("NFT transfer", 40, tokens.transfer_nft),
    ("failed token transfer", 8, tokens.failed_token_transfer),
    ("token dissociate", 3, tokens.dissociate),
    ("token update", 2, tokens.update_token),
    ("airdrop", 8, airdrops.airdrop),
    ("pending airdrop", 0, functools.partial(airdrops.airdrop, pending=True)),
    ("direct airdrop", 0, functools.partial(airdrops.airdrop, pending=False)),
    ("airdrop claim or cancel", 6, airdrops.claim_or_cancel),
    ("topic create", 5, services.create_topic),
    ("admin-keyed topic create", 0, functools.partial(services.create_topic, admin_keyed=True)),
    ("topic message", 110, services.submit_message),
    ("topic update or delete", 3, services.update_or_delete_topic),
    ("schedule create", 8, services.create_schedule),
    ("schedule sign", 7, services.sign_schedule),
    ("schedule delete", 2, services.delete_schedule),
    ("prng", 10, services.prng),
    ("contract create", 2, contracts.create_contract),
    ("contract call", 20, contracts.call_contract),
    ("ECDSA account create", 3, ethereum.create_ecdsa_account),
    ("ethereum call", 10, ethereum.ethereum_call),
    ("contract update or delete", 3, contracts.update_or_delete_contract),
    ("contract delete", 0, functools.partial(contracts.update_or_delete_contract, delete=True)),
    ("KYC grant or revoke", 6, token_admin.grant_or_revoke_kyc),
    ("token freeze or unfreeze", 3, token_admin.freeze_or_unfreeze),
    ("token pause or unpause", 2, token_admin.pause_or_unpause),
    ("token wipe", 2, token_admin.wipe),
    ("token reject", 2, token_admin.reject),
    ("NFT airdrop", 4, airdrops.nft_airdrop),
    ("pending NFT airdrop", 0, functools.partial(airdrops.nft_airdrop, pending=True)),
    ("direct NFT airdrop", 0, functools.partial(airdrops.nft_airdrop, pending=False)),
    ("NFT airdrop claim or cancel", 0, airdrops.settle_nft),
    ("chunked topic message", 0, functools.partial(services.submit_message, chunks=3)),
    ("file create", 2, governance.create_file),
    ("system delete or undelete", 1, governance.system_delete_or_undelete),
    ("freeze", 1, governance.freeze),
    ("node create", 1, governance.create_node),
    ("node update or delete", 1, governance.update_or_delete_node),
    ("hooked account create", 2, hooks.create_hooked_account),
    ("hook store", 4, hooks.hook_store),
    ("atomic batch", 5, batches.atomic_batch),
    ("token fee schedule update", 2, token_changes.update_fee_schedule),
    ("NFT metadata update", 2, token_changes.update_nft_metadata),
    ("token delete", 1, token_changes.delete_token),
    ("file update or delete", 1, governance.update_or_delete_file),
    ("hook delete", 1, hooks.delete_hook),
    ("regulated token set-up", 0, tour.regulated_setup),
    ("royalty NFT set-up", 0, tour.royalty_setup),
    ("plain NFT set-up", 0, tour.plain_nft_setup),
    ("short-lived token", 0, tour.short_lived_token),
)

TOUR: tuple[str, ...] = (
    "account create",
    "crypto transfer",
    "fungible token create with fees",
    "fungible token create without fees",
    "plain NFT class create",
    "token associate",
    "token associate",
    "token associate",
    "token associate",
    "fungible mint",
    "NFT mint",
    "fungible token transfer",
    "fee-paying token transfer",
    "NFT transfer",
    "failed transfer",
    "failed token transfer",
    "pending airdrop",
    "pending airdrop",
    "direct airdrop",
    "airdrop claim or cancel",
    "token dissociate",
    "token update",
    "transfer to new alias",
    "approve allowance",
    "approved transfer",
    "delete NFT allowance",
    "account update",
    "account delete",
    "admin-keyed topic create",
    "topic message",
    "topic update or delete",
    "schedule create",
    "schedule create",
    "schedule create",
    "schedule sign",
    "schedule delete",
    "prng",
    "contract create",
    "contract call",
    "ECDSA account create",
    "ethereum call",
    "fungible burn",
    "regulated token set-up",
    "KYC grant or revoke",
    "token wipe",
    "token freeze or unfreeze",
    "token freeze or unfreeze",
    "token pause or unpause",
    "token pause or unpause",
    "token reject",
    "royalty NFT set-up",
    "plain NFT set-up",
    "pending NFT airdrop",
    "direct NFT airdrop",
    "NFT airdrop claim or cancel",
    "chunked topic message",
    "file create",
    "system delete or undelete",
    "system delete or undelete",
    "freeze",
    "freeze",
    "node create",
    "node update or delete",
    "node update or delete",
    "hooked account create",
    "hook store",
    "hook store",
    "atomic batch",
    "token fee schedule update",
    "NFT metadata update",
    "short-lived token",
    "file update or delete",
    "hook delete",
    "contract update or delete",
    "contract create",
    "contract delete",
)
_TOUR_RETRIES = 5

EVM_WEIGHTS: tuple[tuple[str, int, Generator], ...] = (
    ("ERC-20 deploy", 1, functools.partial(evm_tokens.deploy, kind="Erc20")),
    ("ERC-20 transfer", 12, evm_tokens.erc20_transfer),
    ("ERC-20 failed transfer", 2, evm_tokens.erc20_failed_transfer),
    ("ERC-20 Ethereum transfer", 4, functools.partial(evm_tokens.erc20_transfer, ethereum=True)),
    ("ERC-20 transfer to an ECDSA account", 2, functools.partial(evm_tokens.erc20_transfer, to_ecdsa=True)),
    ("ERC-721 deploy", 1, functools.partial(evm_tokens.deploy, kind="Erc721")),
    ("ERC-721 mint", 8, evm_tokens.erc721_mint),
    ("ERC-721 approve", 3, evm_tokens.erc721_approve),
    ("ERC-721 transfer", 6, evm_tokens.erc721_transfer),
    ("token reader deploy", 0, functools.partial(evm_tokens.deploy, kind="TokenReader")),
    ("token reader call", 4, evm_tokens.read_token),
)
"""The contracts the EVM runs (``evm_contracts``): an ERC-20, an ERC-721 and a reader of HTS tokens."""
EVM_TOUR: tuple[str, ...] = (
    "ERC-20 deploy",
    "ERC-20 transfer",
    "ERC-20 transfer",
    "ERC-20 failed transfer",
    "ERC-20 transfer to an ECDSA account",
    "ERC-20 Ethereum transfer",
    "ERC-721 deploy",
    "ERC-721 mint",
    "ERC-721 mint",
    "ERC-721 approve",
    "ERC-721 transfer",
    "ERC-721 approve",
    "token reader deploy",
    "token reader call",
)


class Mix:
    def __init__(self, em: Emitter, *, evm_contracts: bool = False) -> None:
        """``evm_contracts``: also deploy and call the contracts the EVM runs (:data:`EVM_WEIGHTS`, toured after
        the rest); off by default, so the default mix's streams stay as they were."""
        self.em = em
        weights = WEIGHTS + (EVM_WEIGHTS if evm_contracts else ())
        self.by_name = {name: generator for name, _, generator in weights}
        self.names = [name for name, _, _ in weights]
        self.cumulative: list[int] = []
        total = 0
        for _, weight, _ in weights:
            total += weight
            self.cumulative.append(total)
        self.total = total
        self.scripted: deque[Callable[[Emitter], None]] = deque()
        tour = TOUR + (EVM_TOUR if evm_contracts else ())
        self.tour: deque[tuple[str, int]] = deque((name, 0) for name in tour)

    def step(self) -> None:
        """Fill one slot."""
        if self.scripted:
            self.scripted.popleft()(self.em)
            return
        if self.tour:
            name, tries = self.tour.popleft()
            if self._run(name):
                return
            if tries < _TOUR_RETRIES:
                self.tour.append((name, tries + 1))
        else:
            pick = self.em.rng.randrange(self.total)
            index = next(i for i, bound in enumerate(self.cumulative) if pick < bound)
            if self._run(self.names[index]):
                return
        self._run("crypto transfer")

    def _run(self, name: str) -> bool:
        if name == "approve allowance" and self.tour:
            return all(crypto.approve_allowance(self.em, kind) for kind in crypto.ALLOWANCE_KINDS)
        return self.by_name[name](self.em)
