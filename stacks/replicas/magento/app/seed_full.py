"""SCALE=full bulk data of the Magento contract replica (generated after the tiny seed).

seed.py first writes exactly the tiny data set (same random stream, same rows); then this module
adds the bulk around it: products (EAV name/url_key/status/visibility/price/description, stock,
website, url_rewrite), 300 categories with assignments, customers, orders with items, reviews
with ratings. Ids of the bulk fill the gaps around tiny's ids (admin's sparse ids) and continue
upward, so every tiny entity keeps its id, sku and url key and no tiny row is modified.

Deterministic from SEED and STORE: own random.Random (the tiny stream is not touched), fixed
base timestamp, explicit ids everywhere. Rows are written to TSV files in a temporary directory
and bulk-loaded with LOAD DATA LOCAL INFILE; the directory is removed at the end.
"""
import math, os, random, shutil, tempfile, time
from datetime import datetime, timedelta

import pymysql

import mage
from mage import ATTR, ex, q, q1

# Totals per image, tiny's rows included: the real images' counts where peers counted them
# (research/real-images.md §1.9: the storefront's catalog_product_entity 104,368 and review
# >= 300,000; the admin's catalog_product_entity 2,040 and sales_order 308), else near them.
SIZES_BY_STORE = {
    "shopping": {"products": 104368, "categories": 300, "customers": 3000, "orders": 5000, "reviews": 300000},
    "shopping_admin": {"products": 2040, "categories": 300, "customers": 3000, "orders": 308, "reviews": 40000},
}
BASE_TS = datetime(2023, 4, 18, 12, 0, 0)
DAY = 86400

# --- word lists -------------------------------------------------------------------------
# shopping ("One Stop Market", Amazon-like): department -> [(subcategory, [product nouns])], leaf qualifiers
SHOP_DEPTS = [
    ("Beauty & Personal Care", [("Makeup", ["Lip Gloss", "Eyeliner", "Foundation"]), ("Skin Care", ["Face Moisturizer", "Night Cream", "Facial Cleanser"]),
                                ("Hair Care", ["Shampoo", "Hair Mask", "Conditioner"]), ("Fragrance", ["Eau de Parfum", "Body Mist", "Cologne"]),
                                ("Foot, Hand & Nail Care", ["Nail Polish", "Hand Cream", "Foot File"]), ("Tools & Accessories", ["Makeup Brush Set", "Hair Clips", "Mirror"]),
                                ("Shave & Hair Removal", ["Razor", "Shaving Cream", "Trimmer"]), ("Oral Care", ["Toothpaste", "Toothbrush Heads", "Dental Floss"])],
     ["Sets", "Travel Size"]),
    ("Sports & Outdoors", [("Exercise & Fitness", ["Resistance Bands", "Dumbbell Set", "Jump Rope"]), ("Camping & Hiking", ["Tent", "Sleeping Bag", "Headlamp"]),
                           ("Cycling", ["Bike Light", "Bike Lock", "Cycling Gloves"]), ("Fishing", ["Fishing Lure Kit", "Tackle Box", "Spinning Reel"]),
                           ("Team Sports", ["Soccer Ball", "Basketball", "Baseball Glove"]), ("Water Sports", ["Swim Goggles", "Snorkel Set", "Dry Bag"]),
                           ("Yoga", ["Yoga Block", "Yoga Strap", "Yoga Towel"]), ("Running", ["Running Belt", "Armband", "Hydration Vest"])],
     ["Gear", "Accessories"]),
    ("Clothing, Shoes & Jewelry", [("Women's Clothing", ["Cardigan", "Maxi Dress", "Blouse"]), ("Men's Clothing", ["Polo Shirt", "Chino Pants", "Hoodie"]),
                                   ("Girls' Clothing", ["Leggings", "Tutu Skirt", "Cotton Socks"]), ("Boys' Clothing", ["Graphic Tee", "Jogger Pants", "Swim Trunks"]),
                                   ("Shoes", ["Slippers", "Running Shoes", "Sandals"]), ("Jewelry", ["Necklace", "Stud Earrings", "Bracelet"]),
                                   ("Watches", ["Analog Watch", "Sports Watch", "Watch Band"]), ("Luggage", ["Carry-On Suitcase", "Packing Cubes", "Travel Backpack"])],
     ["Basics", "Accessories"]),
    ("Home & Kitchen", [("Kitchen & Dining", ["Chef Knife", "Cutting Board", "Nonstick Frying Pan"]), ("Bedding", ["Sheet Set", "Pillow", "Comforter"]),
                        ("Bath", ["Bath Towel Set", "Shower Curtain", "Bath Mat"]), ("Home Decor", ["Taper Candles", "Wall Sconce", "Picture Frame"]),
                        ("Furniture", ["TV Stand", "Bookshelf", "Accent Chair"]), ("Lighting", ["Table Lamp", "Floor Lamp", "LED Strip Lights"]),
                        ("Storage & Organization", ["Storage Bins", "Closet Organizer", "Drawer Dividers"]), ("Cleaning Supplies", ["Microfiber Cloths", "Spray Mop", "Scrub Brush"])],
     ["Sets", "Essentials"]),
    ("Electronics", [("Headphones", ["Wireless Headphones", "Earbuds", "Gaming Headset"]), ("Television & Video", ["LED TV", "Streaming Stick", "TV Wall Mount"]),
                     ("Camera & Photo", ["Digital Camera", "Tripod", "Camera Bag"]), ("Computers & Accessories", ["Wireless Mouse", "Keyboard", "Laptop Stand"]),
                     ("Cables", ["HDMI Cable", "USB-C Cable", "DisplayPort Cable"]), ("Portable Audio", ["Bluetooth Speaker", "MP3 Player", "Portable Radio"]),
                     ("Printers & Ink", ["Inkjet Printer", "Ink Cartridge", "Toner"]), ("Memory Cards", ["Micro SD Card", "USB Flash Drive", "Memory Card Reader"])],
     ["Accessories", "Replacement Parts"]),
    ("Cell Phones & Accessories", [("Cases", ["Phone Case", "Wallet Case", "Rugged Case"]), ("Screen Protectors", ["Tempered Glass Screen Protector", "Privacy Screen Protector", "Camera Lens Protector"]),
                                   ("Chargers", ["Wall Charger", "Wireless Charger", "Car Charger"]), ("Mounts", ["Car Phone Mount", "Bike Phone Mount", "Desk Stand"]),
                                   ("Stylus Pens", ["Stylus Pen", "Stylus Tips", "Active Stylus"]), ("Power Banks", ["Power Bank", "Solar Charger", "Battery Case"]),
                                   ("Selfie Sticks", ["Selfie Stick", "Ring Light", "Phone Tripod"]), ("Cell Phones", ["Unlocked Smartphone", "Flip Phone", "Senior Phone"])],
     ["Bundles", "Accessories"]),
    ("Video Games", [("Xbox", ["Controller Skin", "D-Pad Replacement", "Charging Dock"]), ("PlayStation", ["Controller", "Memory Card", "Headset Stand"]),
                     ("Nintendo Switch", ["Carrying Pouch", "Joy-Con Grips", "Screen Protector"]), ("PC Gaming", ["Gaming Mouse", "Mechanical Keyboard", "Mouse Pad"]),
                     ("Retro Gaming", ["Retro Console", "Arcade Stick", "Cartridge Case"]), ("Virtual Reality", ["VR Headset Strap", "VR Lens Protector", "VR Controller Grips"]),
                     ("Gaming Chairs", ["Gaming Chair", "Seat Cushion", "Floor Mat"]), ("Game Accessories", ["Thumb Grips", "Charging Cable", "Storage Rack"])],
     ["Accessories", "Bundles"]),
    ("Grocery & Gourmet Food", [("Beverages", ["Energy Drink", "Sparkling Water", "Cold Brew Coffee"]), ("Snacks", ["Trail Mix", "Potato Chips", "Protein Bar"]),
                                ("Breakfast", ["Granola", "Pancake Mix", "Oatmeal Cups"]), ("Tea", ["Herbal Tea", "Green Tea", "Fruit Infusion"]),
                                ("Baking", ["Corn Muffin Mix", "Vanilla Extract", "Baking Soda"]), ("Candy & Chocolate", ["Dark Chocolate Bar", "Gummy Bears", "Mint Candy"]),
                                ("Pantry Staples", ["Olive Oil", "Pasta Sauce", "Jasmine Rice"]), ("Meat Substitutes", ["Plant-Based Jerky", "Veggie Burger Mix", "Textured Soy Protein"])],
     ["Variety Packs", "Organic"]),
    ("Health & Household", [("Vitamins", ["Vitamin D3", "Multivitamin Gummies", "Fish Oil"]), ("Household Supplies", ["Laundry Detergent", "Dish Soap", "Trash Bags"]),
                            ("First Aid", ["First Aid Kit", "Bandages", "Cold Pack"]), ("Medical Supplies", ["Thermometer", "Pill Organizer", "Blood Pressure Monitor"]),
                            ("Sleep & Snoring", ["Sleep Mask", "Ear Plugs", "White Noise Machine"]), ("Baby & Child Care", ["Baby Wipes", "Nasal Aspirator", "Teething Gel"]),
                            ("Sports Nutrition", ["Whey Protein", "Electrolyte Powder", "Pre-Workout"]), ("Wellness", ["Massage Ball", "Essential Oil", "Heating Pad"])],
     ["Value Packs", "Travel Size"]),
    ("Office Products", [("Writing Instruments", ["Gel Pens", "Highlighters", "Mechanical Pencils"]), ("Paper", ["Copy Paper", "Sticky Notes", "Notebook"]),
                         ("Office Furniture", ["Desk Chair", "Standing Desk", "Footrest"]), ("Desk Accessories", ["Desk Organizer", "Stapler", "Tape Dispenser"]),
                         ("Filing", ["File Folders", "Binder", "Label Maker"]), ("Calendars & Planners", ["Weekly Planner", "Wall Calendar", "Desk Pad"]),
                         ("Shipping Supplies", ["Bubble Mailers", "Packing Tape", "Shipping Boxes"]), ("Presentation", ["Whiteboard", "Dry Erase Markers", "Laser Pointer"])],
     ["Bulk", "Sets"]),
    ("Tools & Home Improvement", [("Power Tools", ["Cordless Drill", "Jigsaw", "Orbital Sander"]), ("Hand Tools", ["Screwdriver Set", "Tape Measure", "Pliers"]),
                                 ("Electrical", ["Extension Cord", "Smart Plug", "Light Switch"]), ("Light Bulbs", ["LED Bulbs", "Ceiling Light", "Night Light"]),
                                 ("Hardware", ["Wall Hooks", "Cabinet Hinges", "Door Stopper"]), ("Kitchen & Bath Fixtures", ["Faucet", "Shower Head", "Towel Bar"]),
                                 ("Painting Supplies", ["Paint Roller", "Painter's Tape", "Drop Cloth"]), ("Safety & Security", ["Smoke Detector", "Safe Box", "Security Camera"])],
     ["Kits", "Replacement Parts"]),
    ("Patio, Lawn & Garden", [("Gardening", ["Garden Hose", "Pruning Shears", "Plant Pots"]), ("Outdoor Decor", ["Solar Lights", "Wind Chimes", "Garden Flag"]),
                              ("Grills & Outdoor Cooking", ["Grill Brush", "BBQ Tool Set", "Grill Cover"]), ("Patio Furniture", ["Patio Chair", "Hammock", "Outdoor Cushions"]),
                              ("Pest Control", ["Mosquito Repellent", "Mouse Trap", "Bird Netting"]), ("Lawn Mowers", ["Mower Blade", "String Trimmer Line", "Leaf Blower"]),
                              ("Bird & Wildlife Care", ["Bird Feeder", "Bird Seed", "Bird House"]), ("Watering Equipment", ["Sprinkler", "Hose Nozzle", "Watering Can"])],
     ["Sets", "Accessories"]),
]
SHOP_PRICE = {"Beauty & Personal Care": (4, 60), "Sports & Outdoors": (8, 150), "Clothing, Shoes & Jewelry": (6, 90), "Home & Kitchen": (7, 250),
              "Electronics": (6, 400), "Cell Phones & Accessories": (5, 120), "Video Games": (5, 200), "Grocery & Gourmet Food": (2, 60),
              "Health & Household": (4, 80), "Office Products": (3, 300), "Tools & Home Improvement": (5, 220), "Patio, Lawn & Garden": (5, 180)}
BRANDS = ["Amazon Basics", "Nearpow", "GearIT", "Fosmon", "Elmwood Inn", "Epson", "Fujifilm", "Haflinger", "Mineralogie", "Sceptre", "Sensodyne", "Skinit",
          "Spaas", "Tazrigo", "V8", "Viviki", "Anker", "Ciclon", "Jiffy", "Belkin", "Sony", "Philips", "Hamilton Beach", "Coleman", "Lifeworks",
          "Kinsley", "Northline", "Bluefin", "Crestwood", "Everpure", "Maple & Moss", "Ostent", "Pinecrest", "Riverbend", "Solara", "Trailhead",
          "Urbanist", "Vantage", "Willow Lane", "Zenith"]
ADJ = ["Premium", "Classic", "Ultra Slim", "Heavy Duty", "Portable", "Compact", "Deluxe", "Organic", "Natural", "Professional", "Lightweight",
       "Waterproof", "Rechargeable", "Adjustable", "Eco-Friendly", "Stainless Steel", "Soft", "Vintage", "Modern", "Foldable", "Universal", "2023 Updated"]
COLORS = ["Black", "White", "Gray", "Navy Blue", "Red", "Pink", "Green", "Beige", "Gold", "Silver", "Purple", "Orange", "Brown", "Clear"]
SHOP_FEATURES = ["Easy to Use", "Long Lasting", "Gift Idea", "BPA Free", "Fast Shipping", "Value Pack", "Travel Friendly", "Scratch Resistant", "Dishwasher Safe",
                 "Scent Free", "Non-Slip", "Quick Dry", "For Home and Office", "For Women and Men", "For Kids", "Made in USA"]

# shopping_admin ("Luma"): same structure, sportswear/gear flavoured
LUMA_DEPTS = [
    ("Women", [("Tops", ["Tee", "Tank", "Bra"]), ("Bottoms", ["Pant", "Short", "Capri"]), ("Jackets", ["Jacket", "Windbreaker", "Shell"]),
               ("Hoodies & Sweatshirts", ["Hoodie", "Sweatshirt", "Pullover"]), ("Bras & Tanks", ["Bra Top", "Racer Tank", "Cami"]),
               ("Leggings", ["Legging", "Tight", "Jogger"]), ("Dresses", ["Dress", "Skort", "Tunic"]), ("Swimwear", ["Swimsuit", "Rash Guard", "Board Short"])],
     ["Performance", "Eco Collection", "New Arrivals", "Best Sellers", "Plus Size"]),
    ("Men", [("Tops", ["Tee", "Tank", "Polo"]), ("Bottoms", ["Pant", "Short", "Jogger"]), ("Jackets", ["Jacket", "Shell", "Parka"]),
             ("Hoodies & Sweatshirts", ["Hoodie", "Sweatshirt", "Quarter Zip"]), ("Tees", ["Crew Tee", "Henley", "Muscle Tee"]),
             ("Tanks", ["Tank", "Singlet", "Sleeveless Tee"]), ("Base Layers", ["Base Layer", "Compression Top", "Thermal"]), ("Swimwear", ["Swim Trunk", "Rash Guard", "Jammer"])],
     ["Performance", "Eco Collection", "New Arrivals", "Best Sellers", "Big & Tall"]),
    ("Gear", [("Bags", ["Backpack", "Duffle", "Messenger Bag"]), ("Fitness Equipment", ["Kettlebell", "Foam Roller", "Ab Roller"]), ("Watches", ["Watch", "Fitness Tracker", "Sport Watch"]),
              ("Water Bottles", ["Water Bottle", "Shaker Bottle", "Insulated Tumbler"]), ("Yoga Gear", ["Yoga Mat", "Yoga Block", "Yoga Strap"]),
              ("Headwear", ["Cap", "Beanie", "Headband"]), ("Gloves", ["Training Glove", "Running Glove", "Lifting Glove"]), ("Socks", ["Crew Sock", "Ankle Sock", "Compression Sock"])],
     ["Essentials", "Travel", "New Arrivals", "Best Sellers", "Gifts"]),
    ("Training", [("Video Download", ["Yoga Video", "Pilates Video", "HIIT Video"]), ("Strength", ["Resistance Band", "Dumbbell", "Weight Plate"]),
                  ("Cardio", ["Jump Rope", "Step Platform", "Agility Ladder"]), ("Recovery", ["Massage Ball", "Foam Roller", "Cold Pack"]),
                  ("Flexibility", ["Stretch Strap", "Balance Disc", "Wheel"]), ("Boxing", ["Boxing Glove", "Hand Wrap", "Speed Bag"]),
                  ("Climbing", ["Chalk Bag", "Harness", "Belay Glove"]), ("Swimming", ["Goggle", "Swim Cap", "Kickboard"])],
     ["Beginner", "Intermediate", "Advanced", "At Home", "Studio"]),
    ("Collections", [("Eco Friendly", ["Tee", "Jacket", "Pant"]), ("Performance Fabrics", ["Tank", "Short", "Legging"]), ("Erin Recommends", ["Hoodie", "Bra", "Capri"]),
                     ("Yoga Collection", ["Top", "Legging", "Mat"]), ("Running Collection", ["Short", "Tee", "Jacket"]), ("Outdoor Collection", ["Shell", "Pant", "Pack"]),
                     ("Winter Collection", ["Parka", "Glove", "Beanie"]), ("Summer Collection", ["Tank", "Short", "Cap"])],
     ["New", "Limited", "Bestsellers", "Staff Picks", "Online Only"]),
    ("Sale", [("Women's Deals", ["Tee", "Tank", "Pant"]), ("Men's Deals", ["Hoodie", "Short", "Jacket"]), ("Gear Deals", ["Bag", "Bottle", "Watch"]),
              ("Clearance", ["Tee", "Legging", "Sock"]), ("Bundles", ["Set", "Kit", "Pack"]), ("Last Sizes", ["Jacket", "Pant", "Bra"]),
              ("Outlet", ["Tank", "Capri", "Hoodie"]), ("Gift Ideas", ["Gift Set", "Towel", "Bottle"])],
     ["Under $25", "Under $50", "Final Sale", "Bundles", "Members Only"]),
]
# extra top-level categories after the department trees (Luma's real menu has these)
EXTRA_TOP = {"shopping": [], "shopping_admin": ["What's New", "Promotions", "Gift Cards", "Luma Rewards", "Outlet Stores", "Lookbook"]}
LUMA_FIRST = ["Radiant", "Bella", "Antonia", "Selene", "Affirm", "Chaz", "Mach", "Hero", "Juno", "Ida", "Erika", "Gwyn", "Diva", "Ingrid",
              "Zeppelin", "Orion", "Argus", "Helios", "Hyperion", "Cassius", "Marco", "Typhon", "Aether", "Layla", "Prima", "Echo", "Nona", "Kratos",
              "Atlas", "Cronus", "Daphne", "Eos", "Frankie", "Gobi", "Hawkeye", "Iris", "Jade", "Kenobi", "Lando", "Mars", "Neve", "Olivia", "Phoebe", "Riona"]
LUMA_STYLE = ["Seamless", "Ultra-Light", "Breathe-Easy", "Thermal", "Stretch", "Yoga", "Running", "Training", "Performance", "Compression", "Cotton",
              "Fleece", "Windproof", "Dry-Fit", "Eco", "LumaTech", "Cool-Tech", "All-Weather", "Trail", "Studio"]
LUMA_SIZES = ["XS", "S", "M", "L", "XL"]
LUMA_COLORS = ["Black", "Blue", "Gray", "Green", "Orange", "Purple", "Red", "White", "Yellow", "Brown"]
LUMA_PRICE = {"Women": (22, 99), "Men": (22, 110), "Gear": (7, 92), "Training": (6, 60), "Collections": (19, 99), "Sale": (9, 45)}

FIRST = ["James", "Mary", "John", "Patricia", "Robert", "Jennifer", "Michael", "Linda", "William", "Elizabeth", "David", "Barbara", "Richard", "Susan",
         "Joseph", "Jessica", "Thomas", "Sarah", "Charles", "Karen", "Daniel", "Nancy", "Matthew", "Lisa", "Anthony", "Betty", "Mark", "Sandra", "Steven",
         "Ashley", "Paul", "Kimberly", "Andrew", "Donna", "Joshua", "Michelle", "Kevin", "Carol", "Brian", "Amanda", "Sophie", "Lucas", "Grace", "Adam",
         "Julia", "Samuel", "Ava", "Ethan", "Mia", "Noah"]
LAST = ["Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Rodriguez", "Martinez", "Hernandez", "Lopez", "Gonzalez",
        "Wilson", "Anderson", "Thomas", "Taylor", "Moore", "Jackson", "Martin", "Lee", "Perez", "Thompson", "White", "Harris", "Sanchez", "Clark",
        "Ramirez", "Lewis", "Robinson", "Walker", "Young", "Allen", "King", "Wright", "Scott", "Torres", "Nguyen", "Hill", "Flores", "Green", "Adams",
        "Nelson", "Baker", "Hall", "Rivera", "Campbell", "Mitchell", "Carter", "Roberts"]
DOMAINS = ["gmail.com", "yahoo.com", "hotmail.com", "outlook.com", "icloud.com", "example.com"]
CITIES = [("New York", "New York", "10001"), ("Los Angeles", "California", "90012"), ("Chicago", "Illinois", "60601"), ("Houston", "Texas", "77002"),
          ("Phoenix", "Arizona", "85003"), ("Philadelphia", "Pennsylvania", "19103"), ("San Antonio", "Texas", "78205"), ("San Diego", "California", "92101"),
          ("Dallas", "Texas", "75201"), ("Seattle", "Washington", "98101"), ("Denver", "Colorado", "80202"), ("Boston", "Massachusetts", "02108"),
          ("Miami", "Florida", "33130"), ("Atlanta", "Georgia", "30303"), ("Portland", "Oregon", "97204"), ("Pittsburgh", "Pennsylvania", "15213"),
          ("Nashville", "Tennessee", "37203"), ("Detroit", "Michigan", "48226"), ("Minneapolis", "Minnesota", "55401"), ("Salt Lake City", "Utah", "84101")]
STREETS = ["Main St", "Oak Ave", "Maple Dr", "Cedar Ln", "Park Blvd", "Elm St", "Washington Ave", "Lake Rd", "Hillside Dr", "Sunset Blvd", "River Rd", "Pine St"]
NICKS = ["Shopper", "Kim", "J. Doe", "Marco", "Jane", "Chi", "Debbie", "Oren", "Sean", "Amazon Customer", "Happy Buyer", "Mom of 3", "Tech Guy", "Sam",
         "Lily", "Carlos", "Priya", "Tom", "Grace", "Verified Buyer"]
R_TITLES = {5: ["Love it", "Excellent", "Five stars", "Would buy again", "Perfect"], 4: ["Great value", "Works as described", "Very good", "Pretty good"],
            3: ["Not bad", "It's okay", "Average", "Does the job"], 2: ["Disappointed", "Runs small", "Could be better", "Meh"],
            1: ["Poor quality", "Broke quickly", "Do not buy", "Waste of money"]}
R_SENT = {5: ["Exactly what I needed.", "Great quality for the price.", "Arrived quickly and works perfectly.", "I use it every day."],
          4: ["Good product overall.", "Does what it says.", "Solid quality, minor issues.", "Fits well."],
          3: ["It is fine, nothing special.", "Quality is average.", "Okay for the price.", "Smaller than expected."],
          2: ["Not as described.", "Stopped working after a month.", "Cheap material.", "Sizing is off."],
          1: ["Arrived broken.", "Terrible quality.", "Returned it.", "Does not work at all."]}
STATUS_W = [("complete", 60), ("canceled", 15), ("processing", 10), ("pending", 12), ("holded", 3)]
STATE = {"pending": "new", "processing": "processing", "complete": "complete", "canceled": "canceled", "holded": "holded"}


def slug(name):
    import re
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def esc(v):
    if v is None:
        return "\\N"
    s = v if isinstance(v, str) else str(v)
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


class Full:
    def __init__(self, store, seed):
        self.store, self.R = store, random.Random("magento-replica-full-%s-%s" % (seed, store))
        self.sizes = SIZES_BY_STORE[store]
        self.conn = pymysql.connect(**dict(mage.DB, local_infile=True))
        ex(self.conn, "SET SESSION unique_checks=0, foreign_key_checks=0")
        self.dir = tempfile.mkdtemp(prefix="magento-full-")
        self.counts = {}

    # --- helpers ---
    def ts(self, lo_days, hi_days):
        return (BASE_TS - timedelta(seconds=self.R.randint(int(lo_days * DAY), int(hi_days * DAY)))).strftime("%Y-%m-%d %H:%M:%S")

    def next_id(self, table, col):
        return (q1(self.conn, "SELECT COALESCE(MAX(%s),0) m FROM %s" % (col, table))["m"] or 0) + 1

    def free_ids(self, table, col, total):
        """Ids 1.. not used by tiny's rows, so that tiny + bulk = total rows."""
        used = {r[col] for r in q(self.conn, "SELECT %s FROM %s" % (col, table))}
        out, i = [], 0
        while len(used) + len(out) < total:
            i += 1
            if i not in used:
                out.append(i)
        return out

    def load(self, table, cols, rows, sets=None):
        path = os.path.join(self.dir, table + ".tsv")
        n = 0
        with open(path, "w", encoding="utf-8") as f:
            for r in rows:
                f.write("\t".join(map(esc, r)) + "\n")
                n += 1
        ex(self.conn, "LOAD DATA LOCAL INFILE '%s' INTO TABLE `%s` CHARACTER SET utf8mb4 (%s)%s"
           % (path, table, ", ".join(cols), (" SET " + sets) if sets else ""))
        os.remove(path)
        self.counts[table] = self.counts.get(table, 0) + n

    # --- categories ---
    def categories(self):
        depts = SHOP_DEPTS if self.store == "shopping" else LUMA_DEPTS
        # ids after tiny's categories (Default Category 2, the shop's task categories in seed.py)
        cid, rows, names, tree = q1(self.conn, "SELECT MAX(entity_id) m FROM catalog_category_entity")["m"], [], [], []
        level1 = []
        for di, (dept, subs, quals) in enumerate(depts):
            cid += 1
            top = cid
            level1.append((top, dept))
            rows.append([top, 2, "1/2/%d" % top, di + 1, 2, len(subs) * (1 + len(quals))])
            names.append((top, dept))
        # second pass keeps top-level ids contiguous, then subcategories and leaves
        for (top, dept), (_, subs, quals) in zip(level1, depts):
            for si, (sub, nouns) in enumerate(subs):
                cid += 1
                mid = cid
                rows.append([mid, top, "1/2/%d/%d" % (top, mid), si + 1, 3, len(quals)])
                names.append((mid, sub))
                tree.append((top, mid, mid, dept, sub, nouns))
                for qi, qual in enumerate(quals):
                    cid += 1
                    rows.append([cid, mid, "1/2/%d/%d/%d" % (top, mid, cid), qi + 1, 4, 0])
                    names.append((cid, "%s %s" % (sub, qual)))
                    tree.append((top, mid, cid, dept, sub, nouns))
        extra = EXTRA_TOP[self.store]
        assert len(rows) + len(extra) == self.sizes["categories"], "category lists do not add up to the store's categories"
        for i, name in enumerate(extra):
            cid += 1
            rows.append([cid, 2, "1/2/%d" % cid, len(depts) + i + 1, 2, 0])
            names.append((cid, name))
        stamp = lambda: self.ts(900, 1000)
        self.load("catalog_category_entity", ["entity_id", "attribute_set_id", "parent_id", "created_at", "updated_at", "path", "position", "level", "children_count"],
                  ([r[0], 3, r[1], stamp(), stamp(), r[2], r[3], r[4], r[5]] for r in rows))
        vid = self.next_id("catalog_category_entity_varchar", "value_id")
        self.load("catalog_category_entity_varchar", ["value_id", "attribute_id", "store_id", "entity_id", "value"],
                  ([vid + i, 45, 0, c, n] for i, (c, n) in enumerate(names)))
        # leaves only (subcategories with qualifiers are leaves; subcategory itself also takes products)
        self.tree = tree

    # --- products ---
    def shop_product(self, node):
        R = self.R
        top, mid, leaf, dept, sub, nouns = node
        name = "%s %s %s" % (R.choice(BRANDS), R.choice(ADJ), R.choice(nouns))
        k = R.random()
        if k < 0.25:
            name += ", %s" % R.choice(COLORS)
        elif k < 0.45:
            name += ", Pack of %d" % R.choice([2, 3, 4, 6, 12, 24])
        elif k < 0.6:
            name += " - %s" % R.choice(SHOP_FEATURES)
        elif k < 0.7:
            name += " %d oz" % R.choice([3, 4, 8, 12, 16, 24, 32])
        lo, hi = SHOP_PRICE[dept]
        price = round(math.exp(R.uniform(math.log(lo), math.log(hi))), 2)
        return name, price

    def luma_product(self, node):
        R = self.R
        top, mid, leaf, dept, sub, nouns = node
        name = "%s %s %s" % (R.choice(LUMA_FIRST), R.choice(LUMA_STYLE), R.choice(nouns))
        variant = ""
        if dept in ("Women", "Men", "Collections", "Sale") and R.random() < 0.8:
            variant = "-%s-%s" % (R.choice(LUMA_SIZES), R.choice(LUMA_COLORS))
        lo, hi = LUMA_PRICE[dept]
        price = float(R.randint(lo, hi)) + R.choice([0, 0, 0.5, 0.99])
        return name + variant, price, variant

    def products(self):
        R = self.R
        pids = self.free_ids("catalog_product_entity", "entity_id", self.sizes["products"])
        skus = {r["sku"] for r in q(self.conn, "SELECT sku FROM catalog_product_entity")}
        paths = {r["request_path"] for r in q(self.conn, "SELECT request_path FROM url_rewrite")}
        paths |= {r["value"] + ".html" for r in q(self.conn, "SELECT value FROM catalog_product_entity_varchar WHERE attribute_id=%s", (ATTR["url_key"][0],))}
        alpha = "0123456789ABCDEFGHJKLMNPQRSTUVWXYZ"
        P = []
        for pid in pids:
            node = R.choice(self.tree)
            if self.store == "shopping":
                name, price = self.shop_product(node)
                while True:
                    sku = "B0" + "".join(R.choice(alpha) for _ in range(8))
                    if sku not in skus:
                        break
            else:
                name, price, variant = self.luma_product(node)
                sku = "%s%s%05d%s" % ({"Women": "W", "Men": "M"}.get(node[3], "U"), node[4][0].upper(), pid, variant)
            skus.add(sku)
            key = slug(name)
            if key + ".html" in paths:
                key = "%s-%d" % (key, pid)
            paths.add(key + ".html")
            created = self.ts(30, 1100)
            in_stock = 0 if R.random() < 0.05 else 1
            P.append({"id": pid, "sku": sku, "name": name, "price": price, "type": "simple", "key": key, "node": node, "created": created,
                      "updated": (datetime.strptime(created, "%Y-%m-%d %H:%M:%S") + timedelta(days=R.randint(0, 20))).strftime("%Y-%m-%d %H:%M:%S"),
                      "status": 2 if (self.store == "shopping_admin" and R.random() < 0.02) else 1,
                      "qty": R.randint(1, 1000) if in_stock else 0, "in_stock": in_stock,
                      "desc": "<p>%s. %s %s</p>" % (name, R.choice(SHOP_FEATURES if self.store == "shopping" else LUMA_STYLE) + ".",
                                                     "Product description (replica seed data, %s)." % node[4])})
        self.P = P
        self.load("catalog_product_entity", ["entity_id", "attribute_set_id", "type_id", "sku", "has_options", "required_options", "created_at", "updated_at"],
                  ([p["id"], 4, p["type"], p["sku"], 0, 0, p["created"], p["updated"]] for p in P))
        for typ, attrs in (("varchar", [("name", "name"), ("url_key", "key")]), ("int", [("status", "status"), ("visibility", None), ("quantity_and_stock_status", "in_stock")]),
                           ("decimal", [("price", "price")]), ("text", [("description", "desc")])):
            vid = self.next_id("catalog_product_entity_" + typ, "value_id")

            def gen(vid=vid, attrs=attrs):
                for p in P:
                    for code, field in attrs:
                        val = 4 if field is None else p[field]
                        yield [vid, ATTR[code][0], 0, p["id"], ("%.6f" % val) if code == "price" else val]
                        vid += 1
            self.load("catalog_product_entity_" + typ, ["value_id", "attribute_id", "store_id", "entity_id", "value"], gen())
        iid = self.next_id("cataloginventory_stock_item", "item_id")
        self.load("cataloginventory_stock_item", ["item_id", "product_id", "stock_id", "qty", "is_in_stock", "manage_stock", "website_id"],
                  ([iid + i, p["id"], 1, "%.4f" % p["qty"], p["in_stock"], 1, 0] for i, p in enumerate(P)))
        self.load("catalog_product_website", ["product_id", "website_id"], ([p["id"], 1] for p in P))
        ccp = self.next_id("catalog_category_product", "entity_id")

        def cats():
            n = ccp
            for p in P:
                top, mid, leaf = p["node"][:3]
                for c in sorted({top, leaf}):
                    yield [n, c, p["id"], R.randint(0, 50)]
                    n += 1
        self.load("catalog_category_product", ["entity_id", "category_id", "product_id", "position"], cats())
        uid = self.next_id("url_rewrite", "url_rewrite_id")
        self.load("url_rewrite", ["url_rewrite_id", "entity_type", "entity_id", "request_path", "target_path", "redirect_type", "store_id", "is_autogenerated"],
                  ([uid + i, "product", p["id"], p["key"] + ".html", "catalog/product/view/id/%d" % p["id"], 0, 1, 1] for i, p in enumerate(P)))

    # --- customers ---
    def customers(self):
        R = self.R
        cids = self.free_ids("customer_entity", "entity_id", self.sizes["customers"])
        C = []
        for cid in cids:
            first, last = R.choice(FIRST), R.choice(LAST)
            city, region, postcode = R.choice(CITIES)
            created = self.ts(100, 1200)
            C.append({"id": cid, "first": first, "last": last, "email": ("%s.%s%d@%s" % (first, last, cid, R.choice(DOMAINS))).lower(),
                      "created": created, "hash": mage.hash_password("Password.123", "%032x" % R.getrandbits(128)),
                      "city": city, "region": region, "postcode": postcode, "street": "%d %s" % (R.randint(1, 9999), R.choice(STREETS)),
                      "tel": "%03d555%04d" % (R.randint(201, 989), R.randint(0, 9999)), "news": 1 if R.random() < 0.25 else 3,
                      "share": "%032x" % R.getrandbits(128)})
        self.C = C
        self.load("customer_entity", ["entity_id", "website_id", "email", "group_id", "store_id", "created_at", "updated_at", "firstname", "lastname",
                                      "password_hash", "created_in", "default_billing", "default_shipping"],
                  ([c["id"], 1, c["email"], 1, 1, c["created"], c["created"], c["first"], c["last"], c["hash"], "Default Store View", c["id"], c["id"]] for c in C))
        self.load("customer_address_entity", ["entity_id", "parent_id", "created_at", "updated_at", "city", "country_id", "firstname", "lastname", "postcode", "region", "street", "telephone"],
                  ([c["id"], c["id"], c["created"], c["created"], c["city"], "US", c["first"], c["last"], c["postcode"], c["region"], c["street"], c["tel"]] for c in C))
        sid = self.next_id("newsletter_subscriber", "subscriber_id")
        self.load("newsletter_subscriber", ["subscriber_id", "store_id", "customer_id", "subscriber_email", "subscriber_status"],
                  ([sid + i, 1, c["id"], c["email"], c["news"]] for i, c in enumerate(C)))
        wid = self.next_id("wishlist", "wishlist_id")
        self.load("wishlist", ["wishlist_id", "customer_id", "shared", "sharing_code", "updated_at"],
                  ([wid + i, c["id"], 0, c["share"], c["created"]] for i, c in enumerate(C)))

    # --- orders ---
    def orders(self):
        R = self.R
        eids = self.free_ids("sales_order", "entity_id", self.sizes["orders"])
        latest = q1(self.conn, "SELECT MAX(created_at) m FROM sales_order")["m"]      # tiny's latest order stays the latest
        newest = max(0, int((BASE_TS - latest).total_seconds()) // DAY + 1)
        stamps = sorted((self.ts(newest + 1, newest + 1100) for _ in eids))
        seq = self.next_id("sequence_order_1", "sequence_value")
        item_id = self.next_id("sales_order_item", "item_id")
        addr_id = self.next_id("sales_order_address", "entity_id")
        pay_id = self.next_id("sales_order_payment", "entity_id")
        hist_id = self.next_id("sales_order_status_history", "entity_id")
        store_name = "Main Website\nMain Website Store\nDefault Store View"
        O, I, A, PAY, H = [], [], [], [], []
        sellable = [p for p in self.P if p["status"] == 1]
        for n, (eid, created) in enumerate(zip(eids, stamps)):
            inc = "%09d" % (seq + n)
            assert int(inc) != eid
            c = R.choice(self.C)
            status = R.choices([s for s, _ in STATUS_W], [w for _, w in STATUS_W])[0]
            lines = [(p, R.choice([1, 1, 1, 2, 2, 3])) for p in R.sample(sellable, R.choice([1, 1, 2, 2, 3, 4]))]
            subtotal = sum(p["price"] * qty for p, qty in lines)
            qty_all = sum(qty for _, qty in lines)
            ship = 5.0 * qty_all
            O.append([eid, STATE[status], status, inc, 1, c["id"], c["email"], c["first"], c["last"], 1, "%.4f" % (subtotal + ship), "%.4f" % (subtotal + ship),
                      "%.4f" % subtotal, "%.4f" % ship, "0.0000", "0.0000", "%.4f" % qty_all, "%.4f" % ((subtotal + ship) if status == "complete" else 0),
                      "flatrate_flatrate", "Flat Rate - Fixed", store_name, created, created, len(lines)])
            for p, qty in lines:
                I.append([item_id, eid, 1, created, created, p["id"], p["type"], p["sku"], p["name"], "%.4f" % qty, "%.4f" % (qty if status == "canceled" else 0),
                          "%.4f" % p["price"], "%.4f" % p["price"], "%.4f" % p["price"], "%.4f" % (p["price"] * qty)])
                item_id += 1
            for typ in ("billing", "shipping"):
                A.append([addr_id, eid, typ, c["first"], c["last"], c["street"], c["city"], c["region"], c["postcode"], "US", c["tel"], c["email"]])
                addr_id += 1
            PAY.append([pay_id, eid, "checkmo", "%.4f" % (subtotal + ship)])
            pay_id += 1
            if self.store == "shopping_admin":                                     # as tiny's admin orders
                H.append([hist_id, eid, 0, 1, "Order placed (replica seed data).", status, created, "order"])
                hist_id += 1
        self.load("sequence_order_1", ["sequence_value"], ([seq + n] for n in range(len(eids))))
        self.load("sales_order", ["entity_id", "state", "status", "increment_id", "store_id", "customer_id", "customer_email", "customer_firstname", "customer_lastname",
                                  "customer_group_id", "grand_total", "base_grand_total", "subtotal", "shipping_amount", "tax_amount", "discount_amount",
                                  "total_qty_ordered", "total_paid", "shipping_method", "shipping_description", "store_name", "created_at", "updated_at", "total_item_count"], O)
        self.load("sales_order_item", ["item_id", "order_id", "store_id", "created_at", "updated_at", "product_id", "product_type", "sku", "name", "qty_ordered",
                                       "qty_canceled", "price", "base_price", "original_price", "row_total"], I)
        self.load("sales_order_address", ["entity_id", "parent_id", "address_type", "firstname", "lastname", "street", "city", "region", "postcode", "country_id",
                                          "telephone", "email"], A)
        self.load("sales_order_payment", ["entity_id", "parent_id", "method", "amount_ordered"], PAY)
        if H:
            self.load("sales_order_status_history", ["entity_id", "parent_id", "is_customer_notified", "is_visible_on_front", "comment", "status", "created_at", "entity_name"], H)
        ex(self.conn, mage.GRID_SYNC_SQL + " LEFT JOIN sales_order_grid x ON x.entity_id=o.entity_id WHERE x.entity_id IS NULL")
        self.counts["sales_order_grid"] = len(O)

    # --- reviews ---
    def reviews(self):
        R = self.R
        rids = self.free_ids("review", "review_id", self.sizes["reviews"])
        det = self.next_id("review_detail", "detail_id")
        vote = self.next_id("rating_option_vote", "vote_id")
        popular = R.sample(self.P, len(self.P) // 20)                              # a few products collect many reviews
        RV, D, S, V = [], [], [], []
        for n, rid in enumerate(rids):
            p = R.choice(popular) if R.random() < 0.4 else R.choice(self.P)
            value = R.choices([1, 2, 3, 4, 5], [6, 7, 14, 28, 45])[0]
            status = R.choices([1, 2, 3], [90, 7, 3])[0]
            cid = R.choice(self.C)["id"] if R.random() < 0.35 else None
            created = self.ts(1, 1000)
            RV.append([rid, created, 1, p["id"], status])
            D.append([det + n, rid, 1, R.choice(R_TITLES[value]), " ".join(R.sample(R_SENT[value], 2)), R.choice(NICKS), cid])
            S += [[rid, 0], [rid, 1]]
            V.append([vote + n, 15 + value, "127.0.0.1", "7F000001", cid, p["id"], 4, rid, value * 20, value])
        self.load("review", ["review_id", "created_at", "entity_id", "entity_pk_value", "status_id"], RV)
        self.load("review_detail", ["detail_id", "review_id", "store_id", "title", "detail", "nickname", "customer_id"], D)
        self.load("review_store", ["review_id", "store_id"], S)
        self.load("rating_option_vote", ["vote_id", "option_id", "remote_ip", "@ip", "customer_id", "entity_pk_value", "rating_id", "review_id", "percent", "value"],
                  V, sets="remote_ip_long=CONV(@ip, 16, 10)")

    def run(self):
        t0 = time.time()
        try:
            for step in (self.categories, self.products, self.customers, self.orders, self.reviews):
                t = time.time()
                step()
                print("full: %-10s %6.1fs" % (step.__name__, time.time() - t), flush=True)
            ex(self.conn, "ANALYZE TABLE " + ", ".join(sorted(self.counts)))
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.conn.close()
        print("full: bulk rows " + ", ".join("%s=%d" % kv for kv in sorted(self.counts.items())) + " (%.1fs)" % (time.time() - t0), flush=True)


def seed_full(store, seed):
    Full(store, seed).run()
