// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

// Views, reverts and writes for POST /api/v1/contracts/call (the cases of the reference's ContractCallServiceTest,
// RevertTest and EvmCodes tests that do not need Hedera's system contracts).
contract CallTarget {
    error CustomError(uint256 code);

    string private stored = "test";
    uint256 public counter;
    mapping(uint256 => uint256) public values;
    address public owner;

    constructor() {
        owner = msg.sender;
        values[7] = 49;
    }

    function multiplySimpleNumbers() external pure returns (uint256) {
        return 2 * 2;
    }

    function returnStorageData() external view returns (string memory) {
        return stored;
    }

    function loop(uint256 n) external pure returns (uint256 total) {
        for (uint256 i = 0; i < n; i++) {
            total += i;
        }
    }

    function increment() external returns (uint256) {
        counter += 1;
        return counter;
    }

    function setValue(uint256 key, uint256 value) external returns (uint256) {
        values[key] = value;
        return values[key] + counter;
    }

    function revertWithReason() external pure {
        revert("Custom revert message");
    }

    function revertWithNothing() external pure {
        revert();
    }

    function revertWithCustomError() external pure {
        revert CustomError(1);
    }

    function revertWithPanic() external pure returns (uint256) {
        uint256 zero = 0;
        return 1 / zero;
    }

    function payMe() external payable returns (uint256) {
        return msg.value;
    }

    function balanceOfAddress(address account) external view returns (uint256) {
        return account.balance;
    }

    function blockContext() external view returns (uint256 number, uint256 timestamp, uint256 chain) {
        return (block.number, block.timestamp, block.chainid);
    }

    function blockHashOf(uint256 number) external view returns (bytes32) {
        return blockhash(number);
    }

    function sender() external view returns (address) {
        return msg.sender;
    }

    function readOther(address other, uint256 key) external view returns (uint256) {
        return CallTarget(other).values(key);
    }

    function deployChild() external returns (address) {
        return address(new Child(counter + 5));
    }
}

// Created by CallTarget.deployChild (a CREATE inside a call).
contract Child {
    uint256 public seed;

    constructor(uint256 seed_) {
        seed = seed_;
    }
}
