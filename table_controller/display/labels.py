"""The displays' words in each language the studio may choose (``display --lang``).

English (``en``), Chinese in simplified script (``zh-Hans``, also ``zh``) and in
traditional script (``zh-Hant``). Only words change: card codes, numbers, round
ids and the variant's odds read the same in every language. A key missing in a
language falls back to English, and one missing in English shows as the key itself.
"""

from __future__ import annotations

import json

EN: dict[str, str] = {
    "live": "live", "connection_lost": "CONNECTION LOST", "paused": "TABLE PAUSED", "round": "round",
    "state_waiting": "waiting", "state_idle": "idle", "state_betting": "place your bets",
    "state_dealing": "no more bets", "state_result": "result", "state_paused": "paused", "state_closed": "closed",
    "banker": "banker", "player": "player", "tie": "tie", "a": "A", "b": "B",
    "short_B": "B", "short_P": "P", "short_T": "T", "short_VOID": "VOID", "short_A": "A",
    "bead_plate": "Bead plate", "big_road": "Big road", "big_eye_boy": "Big eye boy", "small_road": "Small road",
    "cockroach_pig": "Cockroach pig", "ask_B": "B?", "ask_P": "P?",
    "shoe": "Shoe", "stat_banker": "Banker", "stat_player": "Player", "stat_tie": "Tie",
    "stat_player_pair": "Player pair", "stat_banker_pair": "Banker pair", "stat_natural": "Naturals",
    "stat_rounds": "Rounds", "stat_cards_left": "Cards left",
    "payouts": "Payouts", "limits": "Limits", "last_results": "Last results", "history_board": "History",
    "notable": "Notable hands", "win": "win", "lose": "lose", "push": "push",
    "player_pair": "player pair", "banker_pair": "banker pair", "main": "main", "three_pictures": "three pictures",
    "pair_plus": "pair plus", "six_card_bonus": "six-card bonus",
    "shoe-link-down": "shoe not connected", "camera-down": "camera down", "lid-open": "shoe lid open",
    "source-mismatch": "shoe and camera disagree", "dropped-card": "dropped card", "exposed-card": "exposed card",
    "studio": "Studio", "filter_state": "state", "sort": "sort by", "dealer": "dealer",
    "rounds_per_hour": "rounds this hour",
}

ZH_HANS: dict[str, str] = {
    "live": "在线", "connection_lost": "连接中断", "paused": "牌桌暂停", "round": "局",
    "state_waiting": "等待", "state_idle": "空闲", "state_betting": "请下注", "state_dealing": "停止下注",
    "state_result": "结果", "state_paused": "暂停", "state_closed": "关闭",
    "banker": "庄", "player": "闲", "tie": "和",
    "short_B": "庄", "short_P": "闲", "short_T": "和", "short_VOID": "无效",
    "bead_plate": "珠盘路", "big_road": "大路", "big_eye_boy": "大眼仔", "small_road": "小路",
    "cockroach_pig": "曱甴路", "ask_B": "庄问路", "ask_P": "闲问路",
    "shoe": "牌靴", "stat_banker": "庄", "stat_player": "闲", "stat_tie": "和", "stat_player_pair": "闲对",
    "stat_banker_pair": "庄对", "stat_natural": "例牌", "stat_rounds": "局数", "stat_cards_left": "余牌",
    "payouts": "赔率", "limits": "限红", "last_results": "近期结果", "history_board": "历史", "notable": "精彩牌局",
    "win": "赢", "lose": "输", "push": "和局", "player_pair": "闲对", "banker_pair": "庄对", "main": "主注",
    "three_pictures": "三公", "pair_plus": "对子奖", "six_card_bonus": "六张牌奖",
    "shoe-link-down": "牌靴未连接", "camera-down": "摄像头故障", "lid-open": "牌靴盖打开",
    "source-mismatch": "牌靴与摄像头不符", "dropped-card": "掉牌", "exposed-card": "露牌",
    "studio": "演播室", "filter_state": "状态", "sort": "排序", "dealer": "荷官", "rounds_per_hour": "局/本小时",
}

ZH_HANT: dict[str, str] = {
    "live": "在線", "connection_lost": "連接中斷", "paused": "牌桌暫停", "round": "局",
    "state_waiting": "等待", "state_idle": "空閒", "state_betting": "請下注", "state_dealing": "停止下注",
    "state_result": "結果", "state_paused": "暫停", "state_closed": "關閉",
    "banker": "莊", "player": "閒", "tie": "和",
    "short_B": "莊", "short_P": "閒", "short_T": "和", "short_VOID": "無效",
    "bead_plate": "珠盤路", "big_road": "大路", "big_eye_boy": "大眼仔", "small_road": "小路",
    "cockroach_pig": "曱甴路", "ask_B": "莊問路", "ask_P": "閒問路",
    "shoe": "牌靴", "stat_banker": "莊", "stat_player": "閒", "stat_tie": "和", "stat_player_pair": "閒對",
    "stat_banker_pair": "莊對", "stat_natural": "例牌", "stat_rounds": "局數", "stat_cards_left": "餘牌",
    "payouts": "賠率", "limits": "限紅", "last_results": "近期結果", "history_board": "歷史", "notable": "精彩牌局",
    "win": "贏", "lose": "輸", "push": "和局", "player_pair": "閒對", "banker_pair": "莊對", "main": "主注",
    "three_pictures": "三公", "pair_plus": "對子獎", "six_card_bonus": "六張牌獎",
    "shoe-link-down": "牌靴未連接", "camera-down": "攝像頭故障", "lid-open": "牌靴蓋打開",
    "source-mismatch": "牌靴與攝像頭不符", "dropped-card": "掉牌", "exposed-card": "露牌",
    "studio": "演播室", "filter_state": "狀態", "sort": "排序", "dealer": "荷官", "rounds_per_hour": "局/本小時",
}

LANGUAGES: dict[str, dict[str, str]] = {"en": EN, "zh-Hans": ZH_HANS, "zh": ZH_HANS, "zh-Hant": ZH_HANT}


def labels(lang: str) -> dict[str, str]:
    """The words of ``lang`` (English for the keys it lacks); ValueError for an unknown language."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown display language {lang!r} (known: {', '.join(LANGUAGES)})")
    return {**EN, **LANGUAGES[lang]}


def labels_json(lang: str) -> str:
    """The labels as a JavaScript object literal (JSON, ``</`` escaped for a <script> block)."""
    return json.dumps(labels(lang), ensure_ascii=False).replace("</", "<\\/")
