"""The simulated ledger's state: what the network knows after each transaction (accounts, tokens, NFTs,
topics, schedules, contracts, allowances, system files). Generators read it to pick realistic transactions
and change it exactly as the records they write say; ``truth.json`` is its final picture."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ledgermirror.simulator.evm_world import EvmWorld

TREASURY = 2
"""0.0.2 holds the whole initial supply at genesis."""
FEE_COLLECTOR = 98
"""0.0.98 receives the network and service parts of every fee."""
FIRST_USER_NUM = 1001
INITIAL_SUPPLY = 50_000_000_000 * 100_000_000
"""50 billion hbar in tinybars."""
STAKING_REWARD_ACCOUNT = 800
"""0.0.800 pays staking rewards."""
SYSTEM_PAYERS = (50, 55, 56, 57)
"""The privileged accounts that pay for system file updates and stake updates (no fee)."""


def genesis_balances(node_accounts: list[int]) -> dict[int, int]:
    """The accounts that exist before the stream: 0.0.2 with the whole supply; the nodes, 0.0.98, the
    system payers and 0.0.800 (staking rewards) empty (the stream credits them, but never creates them)."""
    accounts = [TREASURY, *node_accounts, FEE_COLLECTOR, *SYSTEM_PAYERS, STAKING_REWARD_ACCOUNT]
    return {num: INITIAL_SUPPLY if num == TREASURY else 0 for num in sorted(accounts)}


@dataclass(slots=True)
class Account:
    num: int
    key: bytes
    """The serialized ``Key`` (ED25519)."""
    created_timestamp: int | None
    memo: str = ""
    alias: bytes = b""
    deleted: bool = False
    obtainer: int | None = None
    max_automatic_token_associations: int = 0
    receiver_sig_required: bool = False
    staked_node_id: int | None = None
    decline_reward: bool = False
    evm_address: bytes = b""
    ethereum_nonce: int = 0
    rewarded_period: int | None = None
    """The staking period (its start) the account was last paid a reward for."""
    pinned: bool = False
    """Involved in something besides hbar (tokens, schedules, allowances, topics): never deleted."""


@dataclass(slots=True)
class CustomFee:
    collector: int
    amount: int
    denominated_in_token: bool
    """``True``: the fee is paid in units of the token itself; ``False``: in tinybars."""


@dataclass(slots=True)
class Royalty:
    """A royalty fee of an NFT class: a fraction of the hbar paid for a serial, else (a gift) the fallback
    fee in tinybars, charged to the receiver."""

    collector: int
    numerator: int
    denominator: int
    fallback: int


FROZEN, UNFROZEN = 1, 2
"""``token_account.freeze_status`` (NOT_APPLICABLE is 0)."""
GRANTED, REVOKED = 1, 2
"""``token_account.kyc_status``."""


@dataclass(slots=True)
class Nft:
    owner: int | None
    metadata: bytes
    created_timestamp: int
    deleted: bool = False
    spender: int | None = None


@dataclass(slots=True)
class Token:
    num: int
    fungible: bool
    name: str
    symbol: str
    decimals: int
    treasury: int
    initial_supply: int
    total_supply: int
    max_supply: int
    created_timestamp: int
    memo: str
    custom_fees: list[CustomFee] = field(default_factory=list)
    balances: dict[int, int] = field(default_factory=dict)
    """Associated accounts and their balances (units, or serial counts for NFTs)."""
    holders: list[int] = field(default_factory=list)
    """The associated accounts in association order (random picks)."""
    nfts: dict[int, Nft] = field(default_factory=dict)
    live_serials: list[int] = field(default_factory=list)
    next_serial: int = 1
    deleted: bool = False
    regulated: bool = False
    """Created with freeze, KYC, pause and wipe keys (freeze default off): holders need a KYC grant."""
    paused: bool = False
    royalty: Royalty | None = None
    freeze_status: dict[int, int] = field(default_factory=dict)
    """Accounts whose ``freeze_status`` the stream set (the treasury at creation, freeze and unfreeze)."""
    kyc_status: dict[int, int] = field(default_factory=dict)
    """Accounts whose ``kyc_status`` the stream set (the treasury at creation, KYC grants and revokes)."""

    def movable(self, *accounts: int) -> bool:
        """Whether these accounts may send or receive the token now (not paused; when regulated, not frozen
        and KYC granted)."""
        if self.paused:
            return False
        if not self.regulated:
            return True
        return all(self.freeze_status.get(a) != FROZEN and self.kyc_status.get(a) == GRANTED for a in accounts)


@dataclass(slots=True)
class Topic:
    num: int
    memo: str
    created_timestamp: int
    submit_key: bytes | None
    admin_key: bytes | None
    auto_renew_account: int | None
    sequence_number: int = 0
    running_hash: bytes = bytes(48)
    last_message_timestamp: int | None = None
    deleted: bool = False
    chunks: int = 0
    """Messages that are chunks of a larger one (``chunk_total`` > 1)."""


@dataclass(slots=True)
class Schedule:
    num: int
    creator: int
    payer: int
    memo: str
    created_timestamp: int
    sender: int
    receiver: int
    amount: int
    scheduled_fee: int
    """The scheduled transfer's ``transactionFee`` (its max fee)."""
    valid_start: int
    """The ScheduleCreate transaction's valid start: the scheduled transaction id reuses it."""
    signers: list[int] = field(default_factory=list)
    admin_key: bytes = b""
    transaction_body: bytes = b""
    """The serialized ``SchedulableTransactionBody``."""
    signatures: list[tuple[bytes, bytes]] = field(default_factory=list)
    """(public key prefix, signature) of the create and sign transactions, in order."""
    executed_timestamp: int | None = None
    executed_result: str | None = None
    deleted_timestamp: int | None = None


@dataclass(slots=True)
class Contract:
    num: int
    created_timestamp: int
    creator: int
    runtime_bytecode: bytes
    initcode: bytes = b""
    storage: dict[bytes, bytes] = field(default_factory=dict)
    calls: int = 0
    memo: str = "simulated contract"
    deleted: bool = False
    obtainer: int | None = None


@dataclass(slots=True)
class EvmToken:
    """A token contract run by the EVM (``kind`` ``ERC20`` or ``ERC721``) or the contract reading HTS tokens
    (``TokenReader``): what its views must answer, as the simulator decided it, and every change in order."""

    contract: Contract
    kind: str
    name: str = ""
    symbol: str = ""
    total_supply: int = 0
    balances: dict[int, int] = field(default_factory=dict)
    """Account → units (ERC-20) or token count (ERC-721)."""
    owners: dict[int, int] = field(default_factory=dict)
    """ERC-721 token id → owning account."""
    uris: dict[int, str] = field(default_factory=dict)
    approved: dict[int, int] = field(default_factory=dict)
    """ERC-721 token id → the account its owner approved (cleared when the token moves)."""
    next_id: int = 1
    events: list[dict[str, Any]] = field(default_factory=list)
    """``{"timestamp", "from", "to", "amount" | "token_id"}`` of every mint and transfer (``from`` None: a
    mint), ``{"timestamp", "token_id", "approved"}`` of an ERC-721 approval, or ``{"timestamp", "token",
    "owner", "balance"}`` of a token service read."""


@dataclass(slots=True)
class Node:
    """A node created in the stream (HIP-869): in the node list, not in the address book that signs."""

    node_id: int
    account: int
    admin_key: bytes
    created_timestamp: int
    description: str
    decline_reward: bool
    deleted: bool = False


@dataclass(slots=True)
class UserFile:
    num: int
    contents: bytes
    created_timestamp: int
    owner: int = 0
    """The creator, whose key is the file's key."""
    deleted: bool = False
    system_deleted: bool = False
    """Deleted by the system admin (a system undelete restores only these)."""


@dataclass(slots=True)
class Hook:
    """An EVM hook of an account (HIP-1195): its contract and its storage (slot → value, 32-byte words)."""

    owner: int
    hook_id: int
    contract: int
    created_timestamp: int
    storage: dict[bytes, bytes] = field(default_factory=dict)
    deleted: bool = False


@dataclass(slots=True)
class Ledger:
    """Hbar balances of every account (contracts included) and the entities created so far."""

    balances: dict[int, int] = field(default_factory=lambda: {TREASURY: INITIAL_SUPPLY})
    """Every account's balance, the genesis accounts' included (see :func:`genesis_balances`)."""
    accounts: dict[int, Account] = field(default_factory=dict)
    users: list[int] = field(default_factory=list)
    """Live user accounts (random picks); a deleted account leaves it."""
    ecdsa_accounts: list[Account] = field(default_factory=list)
    tokens: dict[int, Token] = field(default_factory=dict)
    token_list: list[Token] = field(default_factory=list)
    fungible: list[Token] = field(default_factory=list)
    nft_classes: list[Token] = field(default_factory=list)
    topics: dict[int, Topic] = field(default_factory=dict)
    live_topics: list[Topic] = field(default_factory=list)
    schedules: dict[int, Schedule] = field(default_factory=dict)
    pending_schedules: list[Schedule] = field(default_factory=list)
    """Neither executed nor deleted, oldest first."""
    contracts: dict[int, Contract] = field(default_factory=dict)
    contract_list: list[Contract] = field(default_factory=list)
    crypto_allowances: dict[tuple[int, int], list[int]] = field(default_factory=dict)
    """(owner, spender) → [amount granted, amount left]."""
    crypto_allowance_keys: list[tuple[int, int]] = field(default_factory=list)
    nft_serial_allowances: list[tuple[int, int]] = field(default_factory=list)
    """(token, serial) given a spender (the entry may be stale: the serial moved since)."""
    token_allowances: dict[tuple[int, int, int], list[int]] = field(default_factory=dict)
    """(owner, spender, token) → [amount granted, amount left]."""
    nft_allowances: dict[tuple[int, int, int], bool] = field(default_factory=dict)
    """(owner, spender, token) → approved for all."""
    airdrops: dict[tuple[int, int, int], tuple[int, str]] = field(default_factory=dict)
    """(sender, receiver, token) → (amount, PENDING / CLAIMED / CANCELLED) of the latest fungible airdrop."""
    pending_airdrops: list[tuple[int, int, int]] = field(default_factory=list)
    nft_airdrops: dict[tuple[int, int, int, int], str] = field(default_factory=dict)
    """(sender, receiver, token, serial) → PENDING / CLAIMED / CANCELLED of the latest NFT airdrop."""
    pending_nft_airdrops: list[tuple[int, int, int, int]] = field(default_factory=list)
    nodes: dict[int, Node] = field(default_factory=dict)
    user_files: dict[int, UserFile] = field(default_factory=dict)
    freezes: list[dict[str, object]] = field(default_factory=list)
    """Freeze transactions as ``truth.json`` lists them."""
    upgrade_freezes: bool = False
    """Freezes schedule upgrades (``FREEZE_UPGRADE`` with a start time) instead of preparing them
    (``PREPARE_UPGRADE``); each is aborted by the next freeze either way."""
    hooks: dict[tuple[int, int], Hook] = field(default_factory=dict)
    hook_list: list[Hook] = field(default_factory=list)
    batches: int = 0
    """Atomic batches emitted."""
    staking_rewards: dict[int, int] = field(default_factory=dict)
    """Account → staking rewards paid to it."""
    reward_rate: int = 0
    """Tinybars per whole hbar staked paid for a full staking period (from the last stake update)."""
    reward_period_end: int | None = None
    """End of the staking period the last stake update closed (its midnight): accounts staked before it are
    owed one reward for that period (a simplification: the network pays only stakes held all period long)."""
    evm_tokens: list[EvmToken] = field(default_factory=list)
    """Contracts the EVM runs (``evm_contracts`` mix): kept out of :attr:`contract_list` (the synthetic kinds')."""
    evm_world: EvmWorld | None = None
    """The EVM state of those contracts, when the mix has them."""
    files: dict[int, bytes] = field(default_factory=dict)
    """System file contents after the last update/append (0.0.101, 0.0.102, 0.0.111, 0.0.112)."""
    next_num: int = FIRST_USER_NUM

    def new_num(self) -> int:
        num = self.next_num
        self.next_num += 1
        return num

    def move(self, account: int, amount: int) -> None:
        self.balances[account] = self.balances.get(account, 0) + amount

    def balance(self, account: int) -> int:
        return self.balances.get(account, 0)

    def add_token(self, token: Token) -> None:
        self.tokens[token.num] = token
        self.token_list.append(token)
        (self.fungible if token.fungible else self.nft_classes).append(token)

    def delete_user(self, num: int) -> None:
        self.users.remove(num)
        self.accounts[num].deleted = True
