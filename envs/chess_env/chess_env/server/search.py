"""A small chess engine: alpha-beta search over material and piece placement.

Strong enough to take free pieces, give mate in one and avoid being mated in one at depth 2,
and quick in pure Python (tens of milliseconds a move at depth 2). Positional scores are
computed from simple rules (central squares, pawn advancement, a sheltered king) rather than
hand-tuned tables.
"""

from __future__ import annotations

import random

import chess

MATE = 100_000
PIECE_VALUES = {
    chess.PAWN: 100,
    chess.KNIGHT: 320,
    chess.BISHOP: 330,
    chess.ROOK: 500,
    chess.QUEEN: 900,
    chess.KING: 0,
}


def _centrality(square: int) -> float:
    """1.0 on the four central squares, falling to 0.0 in the corners."""
    file, rank = chess.square_file(square), chess.square_rank(square)
    return 1.0 - (abs(file - 3.5) + abs(rank - 3.5) - 1.0) / 6.0


def _placement(piece_type: int, square: int) -> int:
    """Bonus, in centipawns, for a white piece of ``piece_type`` on ``square``."""
    rank = chess.square_rank(square)
    centre = _centrality(square)
    if piece_type == chess.PAWN:
        return int(8 * rank + 12 * centre * (rank >= 3))
    if piece_type in (chess.KNIGHT, chess.BISHOP):
        return int(30 * centre) - (10 if rank == 0 else 0)
    if piece_type == chess.ROOK:
        return 15 if rank == 6 else int(5 * centre)
    if piece_type == chess.QUEEN:
        return int(10 * centre)
    return int(-25 * centre) + (10 if rank == 0 else 0)  # the king, before the endgame


_TABLES = {
    piece: [PIECE_VALUES[piece] + _placement(piece, sq) for sq in chess.SQUARES]
    for piece in PIECE_VALUES
}


def evaluate(board: chess.Board) -> int:
    """The position's score in centipawns, from the side to move's point of view."""
    score = 0
    for square, piece in board.piece_map().items():
        if piece.color == chess.WHITE:
            score += _TABLES[piece.piece_type][square]
        else:
            score -= _TABLES[piece.piece_type][chess.square_mirror(square)]
    return score if board.turn == chess.WHITE else -score


def _ordered(board: chess.Board) -> list[chess.Move]:
    """Captures (most valuable victim first) and promotions before quiet moves."""

    def key(move: chess.Move) -> int:
        victim = board.piece_type_at(move.to_square)
        attacker = board.piece_type_at(move.from_square) or chess.PAWN
        gain = PIECE_VALUES.get(victim, 0) * 10 - PIECE_VALUES[attacker] // 10 if victim else 0
        return gain + (PIECE_VALUES[move.promotion] if move.promotion else 0)

    return sorted(board.legal_moves, key=key, reverse=True)


def _negamax(board: chess.Board, depth: int, alpha: int, beta: int, ply: int) -> int:
    if board.is_checkmate():
        return -MATE + ply
    if board.is_stalemate() or board.is_insufficient_material():
        return 0
    if depth == 0:
        return evaluate(board)
    best = -MATE
    for move in _ordered(board):
        board.push(move)
        score = -_negamax(board, depth - 1, -beta, -alpha, ply + 1)
        board.pop()
        best = max(best, score)
        alpha = max(alpha, score)
        if alpha >= beta:
            break
    return best


def best_move(board: chess.Board, depth: int = 2, rng: random.Random | None = None) -> chess.Move:
    """The move with the best score at ``depth`` plies; ties broken by ``rng``.

    Raises:
        ValueError: the position has no legal move.
    """
    moves = _ordered(board)
    if not moves:
        raise ValueError("no legal move in this position")
    scored: list[tuple[int, chess.Move]] = []
    alpha = -MATE - 1
    for move in moves:
        board.push(move)
        score = -_negamax(board, depth - 1, -MATE - 1, -alpha + 1, 1)
        board.pop()
        scored.append((score, move))
        alpha = max(alpha, score)
    top = max(score for score, _ in scored)
    candidates = [move for score, move in scored if score == top]
    return (rng or random).choice(candidates)
