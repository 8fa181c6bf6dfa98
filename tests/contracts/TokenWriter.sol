// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

interface IERC20Write {
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
    function approve(address spender, uint256 amount) external returns (bool);
    function balanceOf(address owner) external view returns (uint256);
    function allowance(address owner, address spender) external view returns (uint256);
}

interface IERC721Write {
    function transferFrom(address from, address to, uint256 serial) external;
    function approve(address spender, uint256 serial) external;
    function setApprovalForAll(address operator, bool approved) external;
    function ownerOf(uint256 serial) external view returns (address);
    function getApproved(uint256 serial) external view returns (address);
    function isApprovedForAll(address owner, address operator) external view returns (bool);
    function balanceOf(address owner) external view returns (uint256);
}

interface IHtsWrite {
    function transferNFT(address token, address sender, address recipient, int64 serial)
        external returns (int64 responseCode);
    function approveNFT(address token, address approved, uint256 serial) external returns (int64 responseCode);
    function transferToken(address token, address sender, address recipient, int64 amount)
        external returns (int64 responseCode);
    function transferFrom(address token, address from, address to, uint256 amount)
        external returns (int64 responseCode);
    function approve(address token, address spender, uint256 amount)
        external returns (int64 responseCode, bool approved);
    function associateToken(address account, address token) external returns (int64 responseCode);
    function allowance(address token, address owner, address spender)
        external returns (int64 responseCode, uint256 amount);
}

// HTS writes of a simulated call (the reference's ERCTestContract and ModificationPrecompileTestContract cases,
// reduced): each function writes through the token facade or 0x167, then reads back in the same call.
contract TokenWriter {
    IHtsWrite constant HTS = IHtsWrite(address(0x167));

    function transferThenBalances(address token, address to, uint256 amount) external returns (uint256, uint256) {
        require(IERC20Write(token).transfer(to, amount), "transfer failed");
        return (IERC20Write(token).balanceOf(address(this)), IERC20Write(token).balanceOf(to));
    }

    function htsTransferThenBalances(address token, address to, int64 amount) external returns (uint256, uint256) {
        require(HTS.transferToken(token, address(this), to, amount) == 22, "transferToken failed");
        return (IERC20Write(token).balanceOf(address(this)), IERC20Write(token).balanceOf(to));
    }

    function transferFromThenState(address token, address owner, address to, uint256 amount)
        external returns (uint256 ownerBalance, uint256 toBalance, uint256 allowanceLeft)
    {
        require(IERC20Write(token).transferFrom(owner, to, amount), "transferFrom failed");
        (int64 responseCode, uint256 left) = HTS.allowance(token, owner, address(this));
        require(responseCode == 22, "allowance failed");
        return (IERC20Write(token).balanceOf(owner), IERC20Write(token).balanceOf(to), left);
    }

    function approveThenAllowances(address token, address spender, uint256 viaFacade, uint256 viaHts)
        external returns (uint256, uint256)
    {
        require(IERC20Write(token).approve(spender, viaFacade), "approve failed");
        uint256 first = IERC20Write(token).allowance(address(this), spender);
        (int64 responseCode, bool approved) = HTS.approve(token, spender, viaHts);
        require(responseCode == 22 && approved, "HTS approve failed");
        return (first, IERC20Write(token).allowance(address(this), spender));
    }

    function associateThenTransfer(address token, address from, uint256 amount) external returns (int64, uint256) {
        int64 responseCode = HTS.associateToken(address(this), token);
        require(HTS.transferFrom(token, from, address(this), amount) == 22, "transferFrom failed");
        return (responseCode, IERC20Write(token).balanceOf(address(this)));
    }

    function transferThenRevert(address token, address to, uint256 amount) external {
        require(IERC20Write(token).transfer(to, amount), "transfer failed");
        revert("undone");
    }

    // A transfer inside a frame that reverts is undone: the balance read after it is the mirrored one.
    function balanceAfterRevertedTransfer(address token, address to, uint256 amount) external returns (uint256) {
        try this.transferThenRevert(token, to, amount) {
            revert("the inner call must revert");
        } catch {
            return IERC20Write(token).balanceOf(address(this));
        }
    }

    function nftTransferThenState(address token, address to, uint256 serial)
        external returns (address owner, uint256 mine, uint256 theirs)
    {
        IERC721Write(token).transferFrom(address(this), to, serial);
        IERC721Write nft = IERC721Write(token);
        return (nft.ownerOf(serial), nft.balanceOf(address(this)), nft.balanceOf(to));
    }

    function htsNftTransferThenOwner(address token, address to, int64 serial) external returns (address) {
        require(HTS.transferNFT(token, address(this), to, serial) == 22, "transferNFT failed");
        return IERC721Write(token).ownerOf(uint256(uint64(serial)));
    }

    function nftApprovalsThenRead(address token, address spender, uint256 serial)
        external returns (address approved, bool operator, address cleared)
    {
        IERC721Write nft = IERC721Write(token);
        nft.approve(spender, serial);
        approved = nft.getApproved(serial);
        nft.setApprovalForAll(spender, true);
        operator = nft.isApprovedForAll(address(this), spender);
        require(HTS.approveNFT(token, address(0), serial) == 22, "approveNFT failed");
        cleared = nft.getApproved(serial);
    }

    // A write in a static frame fails.
    function staticTransferFails(address token, address to) external view returns (bool) {
        (bool ok, ) = token.staticcall(abi.encodeWithSignature("transfer(address,uint256)", to, 1));
        return !ok;
    }
}
