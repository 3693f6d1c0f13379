from block_pool import slot_of

block_table = [7, 3, 9, 12, 4, 8, 15]
for position in (0, 17, 100):
    block, offset = block_table[position // 16], position % 16
    slot = slot_of(block_table, position)
    print(f"token {position:>3}: block {block:>2} * 16 + {offset:>2} = slot {slot}")
