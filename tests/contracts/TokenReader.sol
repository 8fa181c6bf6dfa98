// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

interface IERC20View {
    function name() external view returns (string memory);
    function symbol() external view returns (string memory);
    function decimals() external view returns (uint8);
    function totalSupply() external view returns (uint256);
    function balanceOf(address owner) external view returns (uint256);
    function allowance(address owner, address spender) external view returns (uint256);
}

interface IHederaTokenService {
    function isToken(address token) external returns (int64 responseCode, bool isToken);
    function getTokenType(address token) external returns (int64 responseCode, int32 tokenType);
    function getTokenDefaultFreezeStatus(address token) external returns (int64 responseCode, bool frozen);
    function getTokenDefaultKycStatus(address token) external returns (int64 responseCode, bool granted);
    function isFrozen(address token, address account) external returns (int64 responseCode, bool frozen);
    function isKyc(address token, address account) external returns (int64 responseCode, bool granted);
}

// Reads an HTS token through its ERC facade and through the token service at 0x167 (the calls of the
// reference's ERCTestContract and PrecompileTestContract that need only the token's rows).
contract TokenReader {
    IHederaTokenService constant HTS = IHederaTokenService(address(0x167));

    function nameOf(address token) external view returns (string memory) {
        return IERC20View(token).name();
    }

    function symbolOf(address token) external view returns (string memory) {
        return IERC20View(token).symbol();
    }

    function decimalsOf(address token) external view returns (uint8) {
        return IERC20View(token).decimals();
    }

    function totalSupplyOf(address token) external view returns (uint256) {
        return IERC20View(token).totalSupply();
    }

    function balanceIn(address token, address owner) external view returns (uint256) {
        return IERC20View(token).balanceOf(owner);
    }

    function allowanceIn(address token, address owner, address spender) external view returns (uint256) {
        return IERC20View(token).allowance(owner, spender);
    }

    function isTokenAt(address token) external returns (bool) {
        (int64 responseCode, bool found) = HTS.isToken(token);
        require(responseCode == 22, "isToken failed");
        return found;
    }

    function tokenTypeOf(address token) external returns (int32) {
        (int64 responseCode, int32 tokenType) = HTS.getTokenType(token);
        require(responseCode == 22, "getTokenType failed");
        return tokenType;
    }

    // A state read first made inside a frame that fails, then again after it: the value must be the mirrored one.
    function counterAfterFailedWrite(address target) external view returns (uint256) {
        (bool written, ) = target.staticcall(abi.encodeWithSignature("increment()"));
        require(!written, "a write in a static call must fail");
        (bool read, bytes memory output) = target.staticcall(abi.encodeWithSignature("counter()"));
        require(read, "counter() failed");
        return abi.decode(output, (uint256));
    }

    // The same through a reverting call of the token facade, then a read of the same token.
    function nameAfterFailedDecimals(address token) external view returns (string memory) {
        try IERC20View(token).decimals() returns (uint8) {
            revert("decimals() of an NFT must revert");
        } catch {
            return IERC20View(token).name();
        }
    }

    function defaultStatuses(address token) external returns (bool frozen, bool granted) {
        (int64 freezeCode, bool frozenByDefault) = HTS.getTokenDefaultFreezeStatus(token);
        (int64 kycCode, bool grantedByDefault) = HTS.getTokenDefaultKycStatus(token);
        require(freezeCode == 22 && kycCode == 22, "default statuses failed");
        return (frozenByDefault, grantedByDefault);
    }

    function relationOf(address token, address account) external returns (bool frozen, bool granted) {
        (int64 freezeCode, bool isFrozen) = HTS.isFrozen(token, account);
        (int64 kycCode, bool isKyc) = HTS.isKyc(token, account);
        require(freezeCode == 22 && kycCode == 22, "relationship statuses failed");
        return (isFrozen, isKyc);
    }
}
